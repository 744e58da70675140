// The inbox's key and value encodings (the `i!` and `d!` buckets of
// schema.ts): one definition for the store and its equivalence tests.
import { decodeCbor } from '../util/cbor-decode.js'
import { StoreFaultError } from '../util/errors.js'
import { Bucket } from './schema.js'
import { SEPARATED_FORMAT, type ValueReader } from './value-log.js'

const INBOX_PREFIX = Bucket.inbox

export interface InboxEntry {
  seq: number
  /** the packet bytes as received */
  packet: Uint8Array
  /** receive time, ms */
  received: number
}

export function seqKey (nodeId: string, seq: number): string {
  return `${INBOX_PREFIX}${nodeId}!${seq.toString(16).padStart(12, '0')}`
}

/**
 * Inbox entry value, format 1: [0x01][received: float64 BE][packet bytes]. The
 * old format (a CBOR map {r, p}, first byte 0xa2) is still read.
 */
export const ENTRY_FORMAT = 1
export const ENTRY_HEADER = 9

export function encodeInboxValue (received: number, packet: Uint8Array): Uint8Array {
  // every byte is written: no zero fill; small values come from Node's buffer pool
  const out = Buffer.allocUnsafe(ENTRY_HEADER + packet.byteLength)
  out[0] = ENTRY_FORMAT
  out.writeDoubleBE(received, 1)
  out.set(packet, ENTRY_HEADER)
  return out
}

/**
 * encodeInboxValue in place: `spaced` is ENTRY_HEADER free bytes followed by
 * the packet's (the receiver copies each packet of a frame once, into such a
 * buffer: decodeFrameSpaced); the header is written into it and it is the
 * value, the same bytes as encodeInboxValue(received, packet).
 */
export function fillInboxValue (spaced: Uint8Array, received: number): Uint8Array {
  spaced[0] = ENTRY_FORMAT
  new DataView(spaced.buffer, spaced.byteOffset, ENTRY_HEADER).setFloat64(1, received)
  return spaced
}

/**
 * The inbox value of a packet: `spaced` filled in when it is the packet's own
 * buffer with ENTRY_HEADER free bytes before it (`packet` its view past them),
 * else a new value with the packet copied in.
 */
export function inboxValueOf (packet: Uint8Array, spaced: Uint8Array | undefined, received: number): Uint8Array {
  const own = spaced !== undefined && spaced.byteLength === ENTRY_HEADER + packet.byteLength &&
    spaced.buffer === packet.buffer && spaced.byteOffset + ENTRY_HEADER === packet.byteOffset
  return own ? fillInboxValue(spaced, received) : encodeInboxValue(received, packet)
}

/** Writes `d!` values, keeping the head `{"nodeId":…,"seq":` of the last node (one per store). */
export class DedupValueEncoder {
  private nodeId = ''
  private head: Buffer = Buffer.alloc(0)
  encode (nodeId: string, seq: number): Uint8Array {
    if (this.nodeId !== nodeId) { this.nodeId = nodeId; this.head = dedupHeadOf(nodeId) }
    return dedupValue(this.head, seq)
  }
}
const dedupHeadOf = (nodeId: string): Buffer => Buffer.from(`{"nodeId":${JSON.stringify(nodeId)},"seq":`)

/**
 * The `d!` value: the JSON `{"nodeId":…,"seq":N}` (the bytes of
 * toJsonBytes({ nodeId, seq })), built from the head and the seq's digits.
 */
export function encodeDedupValue (nodeId: string, seq: number): Uint8Array {
  return dedupValue(dedupHeadOf(nodeId), seq)
}

function dedupValue (head: Buffer, seq: number): Uint8Array {
  const digits = String(seq)
  const out = Buffer.allocUnsafe(head.byteLength + digits.length + 1)
  out.set(head, 0)
  out.write(digits, head.byteLength, 'latin1')
  out[out.byteLength - 1] = 0x7d // }
  return out
}

/**
 * A stored inbox value: format 1, a separated one (format 1's header, first
 * byte SEPARATED_FORMAT, then a pointer to the packet in `values`, the value
 * log), or the old CBOR map.
 */
export function decodeInboxValue (value: Uint8Array, values?: ValueReader): { r: number, p: Uint8Array } {
  if (value[0] === SEPARATED_FORMAT) return { r: receivedOf(value), p: plainInboxValue(value, values).subarray(ENTRY_HEADER) }
  if (value[0] !== ENTRY_FORMAT) return decodeCbor<{ r: number, p: Uint8Array }>(value)
  return { r: receivedOf(value), p: value.subarray(ENTRY_HEADER) }
}

/** The receive time of a stored inbox value, without its packet. */
export function receivedOf (value: Uint8Array): number {
  if (value[0] !== ENTRY_FORMAT && value[0] !== SEPARATED_FORMAT) return decodeCbor<{ r: number }>(value).r
  return new DataView(value.buffer, value.byteOffset, value.byteLength).getFloat64(1)
}

/** A stored value as format 1 or the old CBOR map: a separated one read back from the value log into a format-1 value. */
export function plainInboxValue (value: Uint8Array, values?: ValueReader): Uint8Array {
  if (value[0] !== SEPARATED_FORMAT) return value
  if (values === undefined) throw new StoreFaultError('an inbox entry\'s packet is in the value log, which this store has not opened')
  const out = values.read(value, ENTRY_HEADER)
  out.set(value.subarray(0, ENTRY_HEADER), 0)
  out[0] = ENTRY_FORMAT
  return out
}

export function seqFromKey (key: string): number {
  return parseInt(key.slice(key.lastIndexOf('!') + 1), 16)
}

