// The value of an outbox queue entry: a fixed header and the packet bytes as
// they are (format 1), or the old CBOR map, still read.
import * as cbor from '@ipld/dag-cbor'

/** the old (CBOR map) value of a queue entry, still read */
export interface StoredEntry { i: string, to: string, from: string, exp: number, p: Uint8Array }

/**
 * Queue entry value, format 1: a fixed header and the packet bytes as they
 * are, so nothing is re-encoded on the way in and nothing copied on the way out.
 *   [0x01][exp: float64 BE][id len: u8][to len: u8][from len: u8][id][to][from][packet]
 * A CBOR map (the old format) starts with 0xa0..0xbf, so the two never clash.
 */
const ENTRY_FORMAT = 1
const HEADER_FIXED = 12
const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()

/** UTF-8 of the last string seen (sender and target node ids repeat from one send to the next). */
class LastEncoded {
  private text = ''
  private bytes = new Uint8Array(0)
  of (s: string): Uint8Array {
    if (s !== this.text) { this.text = s; this.bytes = utf8.encode(s) }
    return this.bytes
  }
}

/** Writes queue entry values, remembering the UTF-8 of the last target and sender (one per store). */
export class EntryValueEncoder {
  private readonly lastTo = new LastEncoded()
  private readonly lastFrom = new LastEncoded()

  encode (packetId: string, to: string, from: string, exp: number, packet: Uint8Array): Uint8Array {
    return entryValue(utf8.encode(packetId), this.lastTo.of(to), this.lastFrom.of(from), exp, packet)
  }
}

function entryValue (id: Uint8Array, t: Uint8Array, f: Uint8Array, exp: number, packet: Uint8Array): Uint8Array {
  if (id.length > 255 || t.length > 255 || f.length > 255) throw new Error('outbox entry: id too long')
  const head = HEADER_FIXED + id.length + t.length + f.length
  // every byte is written: no zero fill; small values come from Node's buffer pool
  const out = Buffer.allocUnsafe(head + packet.byteLength)
  out[0] = ENTRY_FORMAT
  out.writeDoubleBE(exp, 1)
  out[9] = id.length
  out[10] = t.length
  out[11] = f.length
  out.set(id, HEADER_FIXED)
  out.set(t, HEADER_FIXED + id.length)
  out.set(f, HEADER_FIXED + id.length + t.length)
  out.set(packet, head)
  return out
}

export function decodeEntryValue (value: Uint8Array): StoredEntry {
  if (value[0] !== ENTRY_FORMAT) return cbor.decode<StoredEntry>(value)
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength)
  const a = HEADER_FIXED
  const b = a + value[9]
  const c = b + value[10]
  const d = c + value[11]
  return {
    exp: view.getFloat64(1),
    i: fromUtf8.decode(value.subarray(a, b)),
    to: fromUtf8.decode(value.subarray(b, c)),
    from: fromUtf8.decode(value.subarray(c, d)),
    p: value.subarray(d)
  }
}
