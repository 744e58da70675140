// The packet of ARCHITECTURE §2: the context packet inside an envelope.
// Its optional scalar fields are declared in fields.ts (one table drives the
// validator, the decoders, the renderers and the send parameters).
import { PAYLOAD_FIELDS, PRIORITIES, SIGNALS, ZONES } from './fields.js'
import type { OptionalFields } from './fields.js'
import type { JsonValue, OptionValue } from './json-value.js'

export { PAYLOAD_FIELDS, PRIORITIES, SIGNALS, ZONES }
export type Signal = typeof SIGNALS[number]
export type Zone = typeof ZONES[number]
export type Priority = typeof PRIORITIES[number]
export type PayloadField = typeof PAYLOAD_FIELDS[number]
export type { JsonValue, OptionValue }

export interface Scope {
  files: string[]
  zone: Zone
}

/** text is a string; context, decision and result any JSON value (packet schema 2; schema 1 had strings only). */
export interface Payload {
  text?: string
  context?: JsonValue
  decision?: JsonValue
  options?: OptionValue[]
  result?: JsonValue
}

/** The authorising records carried with a packet (encoded bytes, verified by the receiver). */
export interface Proof {
  /** lineage certificates (encoded) */
  lineage?: Uint8Array[]
  /** capability tokens (encoded), a delegation chain from root to the sender */
  grants?: Uint8Array[]
}

/** The envelope and the proof; the optional scalar fields (from_name, to_name, return_to, …) come from fields.ts. */
export interface Packet extends OptionalFields {
  id: string
  from: string
  to: string
  signal: Signal
  scope: Scope
  payload: Payload
  /** sender time, milliseconds since the epoch */
  ts: number
  proof?: Proof
}
