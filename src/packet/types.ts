// The packet of ARCHITECTURE §2: the context packet inside an envelope.

export const SIGNALS = ['SPAWN', 'RETURN', 'BLOCKED_ON', 'CHECKPOINT', 'HANDOFF', 'ESCALATE', 'ERROR', 'MESSAGE'] as const
export type Signal = typeof SIGNALS[number]

export const ZONES = ['kernel', 'project', 'personal'] as const
export type Zone = typeof ZONES[number]

export const PRIORITIES = ['low', 'normal', 'high'] as const
export type Priority = typeof PRIORITIES[number]

export const PAYLOAD_FIELDS = ['text', 'context', 'decision', 'options', 'result'] as const
export type PayloadField = typeof PAYLOAD_FIELDS[number]

export interface Scope {
  files: string[]
  zone: Zone
}

export interface Payload {
  text?: string
  context?: string
  decision?: string
  options?: string[]
  result?: string
}

/** The authorising records carried with a packet (encoded bytes, verified by the receiver). */
export interface Proof {
  /** lineage certificates (encoded) */
  lineage?: Uint8Array[]
  /** capability tokens (encoded), a delegation chain from root to the sender */
  grants?: Uint8Array[]
}

export interface Packet {
  id: string
  from: string
  to: string
  /** the sender's node name, informational (authority comes from `from`) */
  from_name?: string
  /** the target's node name as the sender resolved it, informational */
  to_name?: string
  signal: Signal
  scope: Scope
  payload: Payload
  return_to?: string
  session_id?: string
  conversation_id?: string
  in_reply_to?: string
  priority?: Priority
  requires_reply?: boolean
  /** sender time, milliseconds since the epoch */
  ts: number
  proof?: Proof
}
