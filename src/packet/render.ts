import { decodeCbor } from '../util/cbor-decode.js'
import { RENDERED_FIELDS } from './fields.js'
import type { Packet } from './types.js'

/** What is rendered: a stored packet with its place in an inbox (the store's InboxEntry is one). */
export interface PacketEntry {
  seq: number
  /** the packet bytes as received */
  packet: Uint8Array
  /** receive time, ms */
  received: number
}

export interface RenderedPacket {
  seq: number
  id: string
  from: string
  from_id: string
  to: string
  to_id: string
  signal: string
  payload: Packet['payload']
  scope: Packet['scope']
  ts: number
  received: number
  [key: string]: unknown
}

/** the optional packet fields renderEntry copies, in its order (fields.ts: those with `render`) */
export const OPTIONAL_FIELDS = RENDERED_FIELDS

/** The JSON form of an inbox entry (`amesh inbox --json`, control streams, MCP). */
export function renderEntry (entry: PacketEntry, label: (id: string) => string): RenderedPacket {
  // inbox entries were validated when they were stored: decode without re-validating
  return renderPacket(decodeCbor<Packet>(entry.packet), entry, label)
}

/** renderEntry of an entry whose packet is already decoded (`p`: the decoded `entry.packet`). */
export function renderPacket (p: Packet, entry: PacketEntry, label: (id: string) => string): RenderedPacket {
  const out: RenderedPacket = {
    seq: entry.seq,
    id: p.id,
    from: nameOf(p.from, p.from_name, label),
    from_id: p.from,
    to: nameOf(p.to, p.to_name, label),
    to_id: p.to,
    signal: p.signal,
    payload: p.payload,
    scope: p.scope,
    ts: p.ts,
    received: entry.received
  }
  for (const key of OPTIONAL_FIELDS) {
    if (p[key] !== undefined) out[key] = p[key]
  }
  return out
}

/** The verified name this host knows for a node, else the name the packet carries. */
function nameOf (id: string, carried: string | undefined, label: (id: string) => string): string {
  const known = label(id)
  return known !== id ? known : (carried ?? id)
}

