import { SECOND } from '../util/time.js'
import { isUlid } from '../util/ulid.js'
import { ulidTime, ulidTimePrefix } from './ulid-time.js'
import type { RecordMeta } from './receipt-values.js'

// The `delivered` records of one ack batch in one value (`z!<largest id>!<smallest id>`),
// instead of one `h!<id>!delivered` op per message: the sender writes it in
// the batch that removes the acked entries from the outbox, so it is one
// LevelDB op per ack instead of one per packet. Only messages whose id (a
// ULID) was minted at most DELIVERED_WINDOW_MS before the ack go in it; a
// lookup of id X therefore reads the keys from `z!X` up to the prefix of
// X's time + the window (the batch holding X has X <= largest id, and its
// largest id was minted before the ack). Others get per-id records as before.
//   [0x02][at: float64 BE][k: u8][k × (len: u8, UTF-8)]   (to/from/dest strings)
//   [n: u16 BE][n × (id len: u8, id, flags: u8, q: float64 BE if Q, to: u8, from: u8, dest: u8)]

/** how long after its send a message may be acked and still go in a batch record */
export const DELIVERED_WINDOW_MS = 10 * SECOND

const FORMAT = 2
const OFF = 2
const HAS_Q = 4
const MAX_SMALL = 255
const MAX_ENTRIES = 65_535

export interface DeliveredItem { id: string, meta: RecordMeta }

/** Whether a message acked at `at` may go in a batch record (else its own record). */
export function batchable (id: string, at: number): boolean {
  if (!isUlid(id)) return false
  const t = ulidTime(id)
  return t <= at && t >= at - DELIVERED_WINDOW_MS
}

/** The key of a batch record: largest id, then smallest. */
export function batchKey (prefix: string, items: DeliveredItem[]): string {
  let lo = items[0].id
  let hi = lo
  for (const i of items) { if (i.id < lo) lo = i.id; if (i.id > hi) hi = i.id }
  return `${prefix}${hi}!${lo}`
}

/** The key range where a batch record holding `id` can be (undefined: `id` is not a ULID). */
export function batchRange (prefix: string, id: string): { gte: string, lt: string } | undefined {
  const t = ulidTime(id)
  if (!Number.isFinite(t)) return undefined
  return { gte: `${prefix}${id}`, lt: `${prefix}${ulidTimePrefix(t + DELIVERED_WINDOW_MS + 1)}` }
}

/** The smallest id of a batch record's key (for a cheap skip before the value is read). */
export function smallestOf (prefix: string, key: string): string {
  return key.slice(key.indexOf('!', prefix.length) + 1)
}

function indexStrings (items: DeliveredItem[]): Map<string, number> | undefined {
  const table = new Map<string, number>()
  const add = (s: string): boolean => {
    if (table.has(s)) return true
    if (table.size === MAX_SMALL || Buffer.byteLength(s) > MAX_SMALL) return false
    table.set(s, table.size)
    return true
  }
  // the same target, sender and host repeat from one item to the next: only a change is looked up
  let to: string | undefined
  let from: string | undefined
  let dest: string | undefined
  for (const { meta } of items) {
    if (meta.to !== to) { if (!add(meta.to)) return undefined; to = meta.to }
    if (meta.from !== from) { if (!add(meta.from)) return undefined; from = meta.from }
    if (meta.dest !== dest) { if (!add(meta.dest)) return undefined; dest = meta.dest }
  }
  return table
}

/** The indexStrings reference: every string of every item looked up (tests). */
function indexStringsReference (items: DeliveredItem[]): Map<string, number> | undefined {
  const table = new Map<string, number>()
  for (const { meta } of items) {
    for (const s of [meta.to, meta.from, meta.dest]) {
      if (table.has(s)) continue
      if (table.size === MAX_SMALL || Buffer.byteLength(s) > MAX_SMALL) return undefined
      table.set(s, table.size)
    }
  }
  return table
}

/**
 * A batch record's value, or undefined when it does not fit the layout (then
 * per-id records are written). Each item's id (a ULID: batchable) is written
 * char by char and its string indexes looked up only when they change from
 * the item before; byte for byte batchValueReference (test/store/receipt-batches.test.ts).
 */
export function batchValue (at: number, items: DeliveredItem[]): Uint8Array | undefined {
  if (items.length > MAX_ENTRIES) return undefined
  const table = indexStrings(items)
  if (table === undefined) return undefined
  const { out, start } = batchHead(at, items, table)
  let pos = start
  let to: string | undefined
  let from: string | undefined
  let dest: string | undefined
  let t = 0
  let f = 0
  let d = 0
  for (const { id, meta } of items) {
    out[pos] = id.length
    for (let k = 0; k < id.length; k++) out[pos + 1 + k] = id.charCodeAt(k)
    pos += 1 + id.length
    out[pos++] = (meta.off === true ? OFF : 0) | (meta.q === undefined ? 0 : HAS_Q)
    if (meta.q !== undefined) { out.writeDoubleBE(meta.q, pos); pos += 8 }
    if (meta.to !== to) { to = meta.to; t = table.get(to) as number }
    if (meta.from !== from) { from = meta.from; f = table.get(from) as number }
    if (meta.dest !== dest) { dest = meta.dest; d = table.get(dest) as number }
    out[pos++] = t
    out[pos++] = f
    out[pos++] = d
  }
  return out
}

/** A batch value's buffer, sized for every item, with its head (time, string table, item count) written; items go from `start`. */
function batchHead (at: number, items: DeliveredItem[], table: Map<string, number>): { out: Buffer, start: number } {
  let size = 1 + 8 + 1 + 2
  for (const s of table.keys()) size += 1 + Buffer.byteLength(s)
  for (const { id, meta } of items) size += 1 + id.length + 1 + (meta.q === undefined ? 0 : 8) + 3
  const out = Buffer.allocUnsafe(size)
  out[0] = FORMAT
  out.writeDoubleBE(at, 1)
  out[9] = table.size
  let pos = 10
  for (const s of table.keys()) { const n = out.write(s, pos + 1, 'utf8'); out[pos] = n; pos += 1 + n }
  out.writeUInt16BE(items.length, pos)
  pos += 2
  return { out, start: pos }
}

/** The reference encoding of a batch record's value (the path batchValue must equal; tests). */
export function batchValueReference (at: number, items: DeliveredItem[]): Uint8Array | undefined {
  if (items.length > MAX_ENTRIES) return undefined
  const table = indexStringsReference(items)
  if (table === undefined) return undefined
  const { out, start } = batchHead(at, items, table)
  let pos = start
  for (const { id, meta } of items) {
    out[pos] = out.write(id, pos + 1, 'latin1')
    pos += 1 + id.length
    out[pos++] = (meta.off === true ? OFF : 0) | (meta.q === undefined ? 0 : HAS_Q)
    if (meta.q !== undefined) { out.writeDoubleBE(meta.q, pos); pos += 8 }
    out[pos++] = table.get(meta.to) as number
    out[pos++] = table.get(meta.from) as number
    out[pos++] = table.get(meta.dest) as number
  }
  return out
}

/** The delivered record of `id` in a batch value, if it holds one: when, and the meta. */
export function findInBatch (value: Uint8Array, id: string): { at: number, m: RecordMeta } | undefined {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (buf[0] !== FORMAT || !buf.includes(id, 0, 'latin1')) return undefined
  const at = buf.readDoubleBE(1)
  const strings: string[] = []
  let pos = 10
  for (let k = buf[9]; k > 0; k--) { const n = buf[pos]; strings.push(buf.toString('utf8', pos + 1, pos + 1 + n)); pos += 1 + n }
  const count = buf.readUInt16BE(pos)
  pos += 2
  for (let i = 0; i < count; i++) {
    const n = buf[pos]
    const hit = buf.toString('latin1', pos + 1, pos + 1 + n) === id
    pos += 1 + n
    const flags = buf[pos++]
    const q = (flags & HAS_Q) !== 0 ? buf.readDoubleBE(pos) : undefined
    if (q !== undefined) pos += 8
    if (hit) {
      const m: RecordMeta = { to: strings[buf[pos]], from: strings[buf[pos + 1]], dest: strings[buf[pos + 2]] }
      if ((flags & OFF) !== 0) m.off = true
      if (q !== undefined) m.q = q
      return { at, m }
    }
    pos += 3
  }
  return undefined
}
