// The value of an outbox queue entry: a fixed header and the packet bytes as
// they are (format 1), or the old CBOR map, still read.
import { decodeCbor } from '../util/cbor-decode.js'
import { StoreFaultError } from '../util/errors.js'
import { SEPARATED_FORMAT, type ValueReader } from './value-log.js'

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
  /** the expiry's 8 bytes are written here, then copied: no DataView made per value */
  private readonly expBytes = new Uint8Array(8)
  private readonly expView = new DataView(this.expBytes.buffer)

  /** The header length of the value of this entry: the bytes before its packet. */
  headLength (packetId: string, to: string, from: string): number {
    return HEADER_FIXED + Buffer.byteLength(packetId) + this.lastTo.of(to).length + this.lastFrom.of(from).length
  }

  /**
   * The value of a queue entry. `whole`, when given, is a buffer whose end is
   * `packet` and whose first headLength bytes the caller leaves to this
   * encoder (PacketCodec.encodeAfter): the header is written there and
   * `whole` is the value, so the packet is not copied. Otherwise (or when
   * `whole` is not exactly that) a new value is built. An ASCII id (a ULID,
   * every id amesh mints) is written char by char, not through a
   * TextEncoder's new array. Byte-identical to entryValueReference
   * (test/store/outbox-values.test.ts).
   */
  encode (packetId: string, to: string, from: string, exp: number, packet: Uint8Array, whole?: Uint8Array): Uint8Array {
    const ascii = asciiLength(packetId)
    const id = ascii >= 0 ? packetId : utf8.encode(packetId)
    const t = this.lastTo.of(to)
    const f = this.lastFrom.of(from)
    if (id.length > 255 || t.length > 255 || f.length > 255) throw new Error('outbox entry: id too long')
    const head = HEADER_FIXED + id.length + t.length + f.length
    this.expView.setFloat64(0, exp)
    if (whole !== undefined && fitsAround(whole, packet, head)) {
      writeHead(whole, id, t, f, this.expBytes)
      return whole
    }
    // every byte is written: no zero fill; small values come from Node's buffer pool
    const out = Buffer.allocUnsafe(head + packet.byteLength)
    writeHead(out, id, t, f, this.expBytes)
    out.set(packet, head)
    return out
  }
}

/** s.length when every char of s is ASCII (its UTF-8 is one byte per char), else -1 */
function asciiLength (s: string): number {
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) > 0x7f) return -1
  return s.length
}

/** whole is exactly `head` free bytes, then packet, in one buffer */
function fitsAround (whole: Uint8Array, packet: Uint8Array, head: number): boolean {
  return whole.buffer === packet.buffer && packet.byteOffset === whole.byteOffset + head && whole.byteLength === head + packet.byteLength
}

/** The header at the start of out: `id` an ASCII string or UTF-8 bytes, `exp` its 8 bytes (float64 BE). */
function writeHead (out: Uint8Array, id: string | Uint8Array, t: Uint8Array, f: Uint8Array, exp: Uint8Array): void {
  out[0] = ENTRY_FORMAT
  out.set(exp, 1)
  out[9] = id.length
  out[10] = t.length
  out[11] = f.length
  if (typeof id === 'string') {
    for (let k = 0; k < id.length; k++) out[HEADER_FIXED + k] = id.charCodeAt(k)
  } else {
    out.set(id, HEADER_FIXED)
  }
  out.set(t, HEADER_FIXED + id.length)
  out.set(f, HEADER_FIXED + id.length + t.length)
}

/**
 * The reference encoding of a format-1 value (UTF-8 through a TextEncoder, a
 * DataView for the expiry, a new buffer): what EntryValueEncoder.encode must
 * equal byte for byte (tests).
 */
export function entryValueReference (packetId: string, to: string, from: string, exp: number, packet: Uint8Array): Uint8Array {
  const id = utf8.encode(packetId)
  const t = utf8.encode(to)
  const f = utf8.encode(from)
  if (id.length > 255 || t.length > 255 || f.length > 255) throw new Error('outbox entry: id too long')
  const head = HEADER_FIXED + id.length + t.length + f.length
  const out = new Uint8Array(head + packet.byteLength)
  out[0] = ENTRY_FORMAT
  new DataView(out.buffer, out.byteOffset, HEADER_FIXED).setFloat64(1, exp)
  out[9] = id.length
  out[10] = t.length
  out[11] = f.length
  out.set(id, HEADER_FIXED)
  out.set(t, HEADER_FIXED + id.length)
  out.set(f, HEADER_FIXED + id.length + t.length)
  out.set(packet, head)
  return out
}

/**
 * A stored queue entry: format 1, a separated one (format 1's header, first
 * byte SEPARATED_FORMAT, and a pointer to its packet in `values`, the value
 * log), or the old CBOR map.
 */
export function decodeEntryValue (value: Uint8Array, values?: ValueReader): StoredEntry {
  if (value[0] === SEPARATED_FORMAT) {
    if (values === undefined) throw new StoreFaultError('an outbox entry\'s packet is in the value log, which this store has not opened')
    const entry = decodeHeader(value)
    entry.p = values.read(value)
    return entry
  }
  if (value[0] !== ENTRY_FORMAT) return decodeCbor<StoredEntry>(value)
  return decodeHeader(value)
}

/** The expiry of a stored queue entry, without its packet. */
export function expOfEntryValue (value: Uint8Array): number {
  if (value[0] !== ENTRY_FORMAT && value[0] !== SEPARATED_FORMAT) return decodeCbor<StoredEntry>(value).exp
  return new DataView(value.buffer, value.byteOffset, value.byteLength).getFloat64(1)
}

/** A format-1 value: the header's fields, the packet the bytes after it (a separated value's: its pointer, to be replaced). */
function decodeHeader (value: Uint8Array): StoredEntry {
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
