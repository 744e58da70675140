import { fromJsonBytes, toJsonBytes } from './db.js'

// The value of one stored state of a sent message (`h!<id>!<state>`). The
// sender writes one per message it sent when the receiving host acks it (in
// the batch that removes the outbox entry), so its encoding is on the hot
// path: format 1 is a fixed header and the strings as they are, no JSON.
//   [0x01][at: float64 BE][flags: u8][q: float64 BE, if flag Q]
//   [to len: u8][to][from len: u8][from][dest len: u8][dest], if flag META
//   [reason: UTF-8 to the end], if flag REASON
// The JSON object of the earlier records starts with '{' (0x7b), so the two
// never clash; both are read.

/** Who a sent message went to, and how (receipts.ts SentMeta). */
export interface RecordMeta { to: string, from: string, dest: string, off?: boolean, q?: number }

/** One stored state: when, why (refused/dead), and the sender's meta on its own outcomes. */
export interface HistoryRecord { at: number, reason?: string, m?: RecordMeta }

const FORMAT = 1
const HAS_META = 1
const OFF = 2
const HAS_Q = 4
const HAS_REASON = 8
const MAX_STRING = 255

/** The JSON layout (the reference, and what is written when a string does not fit a length byte). */
export function jsonRecordValue (rec: HistoryRecord): Uint8Array {
  return toJsonBytes(rec)
}

function fits (m: RecordMeta | undefined): boolean {
  return m === undefined || (Buffer.byteLength(m.to) <= MAX_STRING && Buffer.byteLength(m.from) <= MAX_STRING && Buffer.byteLength(m.dest) <= MAX_STRING)
}

function flagsOf (rec: HistoryRecord): number {
  const m = rec.m
  let f = 0
  if (m !== undefined) f |= HAS_META | (m.off === true ? OFF : 0) | (m.q === undefined ? 0 : HAS_Q)
  if (rec.reason !== undefined) f |= HAS_REASON
  return f
}

function writeString (out: Buffer, at: number, s: string): number {
  const n = out.write(s, at + 1, 'utf8')
  out[at] = n
  return at + 1 + n
}

/** A record's value, format 1 (JSON where a string is longer than a length byte). */
export function recordValue (rec: HistoryRecord): Uint8Array {
  const m = rec.m
  if (!fits(m)) return jsonRecordValue(rec)
  const flags = flagsOf(rec)
  const strings = m === undefined ? 0 : 3 + Buffer.byteLength(m.to) + Buffer.byteLength(m.from) + Buffer.byteLength(m.dest)
  const reason = rec.reason === undefined ? 0 : Buffer.byteLength(rec.reason)
  const out = Buffer.allocUnsafe(10 + ((flags & HAS_Q) !== 0 ? 8 : 0) + strings + reason)
  out[0] = FORMAT
  out.writeDoubleBE(rec.at, 1)
  out[9] = flags
  let pos = 10
  if (m !== undefined && m.q !== undefined) { out.writeDoubleBE(m.q, pos); pos += 8 }
  if (m !== undefined) {
    pos = writeString(out, pos, m.to)
    pos = writeString(out, pos, m.from)
    pos = writeString(out, pos, m.dest)
  }
  if (rec.reason !== undefined) out.write(rec.reason, pos, 'utf8')
  return out
}

/** A stored record, of either layout. */
export function decodeRecord (value: Uint8Array): HistoryRecord {
  if (value[0] !== FORMAT) return fromJsonBytes<HistoryRecord>(value)
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  const flags = buf[9]
  const rec: HistoryRecord = { at: buf.readDoubleBE(1) }
  let pos = 10
  let q: number | undefined
  if ((flags & HAS_Q) !== 0) { q = buf.readDoubleBE(pos); pos += 8 }
  if ((flags & HAS_META) !== 0) {
    const str = (): string => { const n = buf[pos]; const s = buf.toString('utf8', pos + 1, pos + 1 + n); pos += 1 + n; return s }
    const to = str()
    const from = str()
    const dest = str()
    rec.m = { to, from, dest, ...((flags & OFF) !== 0 ? { off: true } : {}), ...(q === undefined ? {} : { q }) }
  }
  if ((flags & HAS_REASON) !== 0) rec.reason = buf.toString('utf8', pos)
  return rec
}
