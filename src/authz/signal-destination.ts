// Signal destinations (ADR-026) as a policy: CHECKPOINT goes to the node's
// own record or its parent, HANDOFF stays in the lineage (the node itself or
// a sibling: a "next session" under the same parent), RETURN only answers —
// a message the target sent to the RETURN's sender (in_reply_to), or a SPAWN
// that named the target as return_to. Checked by the sending host (to fail
// early) and by the receiving host (which is never bypassed by a crafted
// packet); overridable per signal in config, or off.
import { verifyLineagePath } from '../acl/index.js'
import type { Packet, Signal } from '../packet/types.js'
import { defineError } from '../util/errors.js'

export const SignalDestinationError = defineError('SignalDestinationError', 'SIGNAL_DESTINATION')
export const SIGNAL_DESTINATION = 'SIGNAL_DESTINATION'

/** Per signal: its rule, or 'any' (no destination rule). Signals not named have none. */
export interface DestinationPolicy {
  CHECKPOINT: 'self_or_parent' | 'any'
  HANDOFF: 'lineage' | 'any'
  RETURN: 'answer' | 'any'
}
export const DEFAULT_DESTINATIONS: DestinationPolicy = { CHECKPOINT: 'self_or_parent', HANDOFF: 'lineage', RETURN: 'answer' }
export const NO_DESTINATIONS: DestinationPolicy = { CHECKPOINT: 'any', HANDOFF: 'any', RETURN: 'any' }

/** What the check needs to know about the two nodes; `answers` is asked only for a RETURN. */
export interface DestinationFacts {
  fromParent: string | null
  toParent: string | null
  /** whether the packet's in_reply_to names a message that makes this RETURN an answer */
  answers: () => Promise<boolean>
}

function ruled (policy: DestinationPolicy, signal: Signal): boolean {
  return (signal === 'CHECKPOINT' || signal === 'HANDOFF' || signal === 'RETURN') && policy[signal] !== 'any'
}

/** Whether the policy has a rule for this packet's signal (the facts are gathered only then). */
export function hasDestinationRule (policy: DestinationPolicy, packet: Packet): boolean {
  return ruled(policy, packet.signal)
}

/** Why the packet breaks the destination rule of its signal, or undefined when it keeps it. */
export async function destinationProblem (policy: DestinationPolicy, packet: Packet, facts: DestinationFacts): Promise<string | undefined> {
  if (!ruled(policy, packet.signal)) return undefined
  const { from, to } = packet
  switch (packet.signal) {
    case 'CHECKPOINT':
      // progress on a request (in_reply_to naming the target's message, as the ACP bridge reports) counts as an answer
      if (to === from || to === facts.fromParent) return undefined
      return packet.in_reply_to !== undefined && await facts.answers() ? undefined : 'CHECKPOINT goes to the node itself (its own record), its parent, or as progress to the sender of the message in in_reply_to'
    case 'HANDOFF':
      return to === from || (facts.fromParent !== null && facts.fromParent === facts.toParent) ? undefined : 'HANDOFF goes only to a node of the same lineage (itself or a sibling under the same parent)'
    case 'RETURN':
      if (packet.in_reply_to === undefined) return 'RETURN answers a message: set in_reply_to (the message it answers)'
      return await facts.answers() ? undefined : `RETURN answers only its in_reply_to's sender or the return_to a SPAWN named; ${packet.in_reply_to} is neither for this target`
    default: return undefined
  }
}

/** The sender's verified parent from the packet's lineage proof (null for a root or a bad proof: the ACL refuses a bad one anyway). */
export function proofParent (packet: Packet): string | null {
  const path = packet.proof?.lineage ?? []
  if (path.length === 0) return null
  try { return verifyLineagePath(path, packet.from)[0].parent } catch { return null }
}

/** Parse config `signal_destinations`: "off", "default", or a map of signal → rule | "any". */
export function parseDestinations (v: unknown, fail: (msg: string) => Error): DestinationPolicy {
  if (v === undefined || v === 'default' || v === true) return { ...DEFAULT_DESTINATIONS }
  if (v === 'off' || v === false) return { ...NO_DESTINATIONS }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail('config: signal_destinations must be "default", "off" or a map of CHECKPOINT/HANDOFF/RETURN to a rule or "any"')
  const out: DestinationPolicy = { ...DEFAULT_DESTINATIONS }
  for (const [k, rule] of Object.entries(v)) {
    if (!(k in DEFAULT_DESTINATIONS)) throw fail(`config: signal_destinations.${k}: only CHECKPOINT, HANDOFF and RETURN have destination rules`)
    const key = k as keyof DestinationPolicy
    if (rule !== 'any' && rule !== DEFAULT_DESTINATIONS[key]) throw fail(`config: signal_destinations.${k} must be "${DEFAULT_DESTINATIONS[key]}" or "any"`)
    ;(out as unknown as Record<string, string>)[key] = rule
  }
  return out
}
