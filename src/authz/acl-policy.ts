// The settings and lookups the ACL service (acl-service.ts) is given.
import type { DestinationPolicy } from './signal-destination.js'

/** The host settings the ACL service reads (from config.yaml). */
export interface AclPolicy {
  /** access-matrix profiles by node name */
  profiles: Record<string, unknown>
  /** lineage depth limit */
  maxDepth: number
  /** at most one denied-attempt notice per sender per window, ms */
  deniedNoticeWindow: number
  /** where CHECKPOINT, HANDOFF and RETURN may go (signal-destination.ts) */
  signalDestinations?: DestinationPolicy
}

/** What a RETURN's destination check reads: the message it answers. */
export interface AnswerLookup {
  /** a message in a local node's inbox (the sending side): its sender and return_to */
  received: (nodeId: string, msgId: string) => Promise<{ from: string, return_to?: string } | undefined>
  /** a message this host sent (the receiving side): its sender and target */
  sent: (msgId: string) => Promise<{ from: string, to: string } | undefined>
}
