import { PacketCodec } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import type { AppendItem, InboxStore } from '../store/inbox.js'
import type { Logger } from '../util/log.js'
import { ulid } from '../util/ulid.js'

export interface NoticesComponents {
  inbox: Pick<InboxStore, 'append'>
  log: Logger
}

/**
 * ERROR notices a node gets from itself, in its own inbox: dead letters (from
 * delivery) and denied attempts (from the ACL service).
 */
export class Notices {
  private readonly codec = new PacketCodec()

  constructor (private readonly components: NoticesComponents) {}

  /** The inbox item of a notice (for callers that append it with other writes). */
  item (nodeId: string, context: string, inReplyTo?: string): AppendItem {
    const packet: Packet = { id: ulid(), from: nodeId, to: nodeId, signal: 'ERROR', scope: { files: [], zone: 'project' }, payload: { context }, ts: Date.now() }
    if (inReplyTo !== undefined) packet.in_reply_to = inReplyTo
    return { nodeId, packetId: packet.id, packet: this.codec.encode(packet) }
  }

  /** Append one notice; a failure is logged (a notice never fails its caller). */
  async notify (nodeId: string, context: string, inReplyTo?: string): Promise<void> {
    const [r] = await this.components.inbox.append([this.item(nodeId, context, inReplyTo)])
    if ('error' in r) this.components.log(`notice to ${nodeId} failed: ${r.error.message}`)
  }
}
