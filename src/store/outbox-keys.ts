// The keys of the outbox: a queue entry's `o!<dest>!<seq: 16 hex>` and its
// expiry index key `e!<exp: 12 hex>!<queue key>`. The reference spells them as
// template strings of hex() digits; OutboxKeys writes the same characters into
// a scratch buffer and takes them as one flat string. A template of pieces is
// a rope that every native put/del (N-API's UTF-8 read) and every Map lookup
// of the settled keys flattens again, and the 8 byte pairs of hex() are 7
// intermediate strings per key (a T2 sender built 3 keys per packet).
import { Bucket } from './schema.js'

const OUTBOX_PREFIX = Bucket.outbox
const EXPIRY_PREFIX = Bucket.expiry

/** n (clamped to [0, 16^width - 1], floored) as `width` hex digits: the reference of hex() (tests) */
export const hexReference = (n: number, width: number): string => Math.min(Math.max(0, Math.floor(n)), 16 ** width - 1).toString(16).padStart(width, '0')

/** two hex digits of each byte value */
const BYTE_HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))
const TWO_32 = 2 ** 32

/**
 * hexReference for the widths keys use (up to 16): from the two 32-bit halves,
 * a byte at a time, where Number#toString(16) of a heap number (a seq or a
 * time in ms is one) took ~2x as long (three calls per packet).
 */
export function hex (n: number, width: number): string {
  if (!Number.isInteger(width) || width < 1 || width > 16 || Number.isNaN(n)) return hexReference(n, width)
  const v = n >= 0 ? Math.min(Math.floor(n), 16 ** width - 1) : 0
  // past 2^53, 16^width - 1 rounds up to 16^width (the reference then gives width + 1 digits)
  if (v > Number.MAX_SAFE_INTEGER) return hexReference(n, width)
  const lo = v % TWO_32
  const hi = (v - lo) / TWO_32
  const s = BYTE_HEX[hi >>> 24] + BYTE_HEX[(hi >>> 16) & 255] + BYTE_HEX[(hi >>> 8) & 255] + BYTE_HEX[hi & 255] +
    BYTE_HEX[lo >>> 24] + BYTE_HEX[(lo >>> 16) & 255] + BYTE_HEX[(lo >>> 8) & 255] + BYTE_HEX[lo & 255]
  return width === 16 ? s : s.slice(16 - width)
}

/** The queue key of an entry (the reference of OutboxKeys.queue). */
export function outboxKey (dest: string, seq: number): string {
  return `${OUTBOX_PREFIX}${dest}!${hex(seq, 16)}`
}

/** The expiry index key of a queue key (the reference of OutboxKeys.index). */
export function expiryKey (exp: number, key: string): string {
  return `${EXPIRY_PREFIX}${hex(exp, 12)}!${key}`
}

type Slice = (this: Buffer, start: number, end: number) => string
/** Buffer's own latin1 slice (what toString('latin1', s, e) calls after checking its arguments) */
const latin1Slice: Slice = (Buffer.prototype as unknown as { latin1Slice?: Slice }).latin1Slice ??
  function (this: Buffer, start: number, end: number) { return this.toString('latin1', start, end) }

/** The seq of a queue key as outboxKey writes it (16 lower-case hex digits at its end), else undefined. */
export function seqOfKey (key: string): number | undefined {
  const n = key.length
  if (n < OUTBOX_PREFIX.length + 17 || key.charCodeAt(n - 17) !== 0x21) return undefined
  let hi = 0
  let lo = 0
  for (let k = n - 16; k < n; k++) {
    const c = key.charCodeAt(k)
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1
    if (d < 0) return undefined
    if (k < n - 8) hi = hi * 16 + d
    else lo = lo * 16 + d
  }
  const seq = hi * 2 ** 32 + lo
  return Number.isSafeInteger(seq) ? seq : undefined
}

/** character codes of the hex digits */
const DIGIT = Array.from('0123456789abcdef', (c) => c.charCodeAt(0))
/** longest key written in the scratch buffer (longer ones, and any non-ASCII one, take the reference) */
const MAX_KEY = 240
const INDEX_HEAD = EXPIRY_PREFIX.length + 12 + 1
const MAX_12 = 16 ** 12

/** `count` hex digits of the integer v (0 <= v < 16^count, count <= 13: below 2^53) into out at pos. */
function digits (out: Buffer, pos: number, v: number, count: number): void {
  let lo = v % TWO_32
  let hi = (v - lo) / TWO_32
  for (let k = pos + count - 1; k >= pos; k--) {
    out[k] = DIGIT[lo & 15]
    lo = (lo >>> 4) | ((hi & 15) << 28)
    hi = hi >>> 4
  }
}

/**
 * Outbox keys as flat strings, equal to outboxKey / expiryKey
 * (test/store/outbox-keys.test.ts). One per store: it remembers the queue
 * prefix of the last destination (every send to a host repeats it).
 */
export class OutboxKeys {
  private readonly queueBuf = Buffer.allocUnsafe(MAX_KEY)
  private readonly indexBuf = Buffer.allocUnsafe(INDEX_HEAD + MAX_KEY)
  /** the destination whose `o!<dest>!` is at the start of queueBuf (its length: prefix), '' with -1: none */
  private dest = ''
  private prefix = -1

  constructor () {
    this.indexBuf.write(EXPIRY_PREFIX, 0, 'latin1')
    this.indexBuf[INDEX_HEAD - 1] = 0x21 // '!'
  }

  /** outboxKey(dest, seq) */
  queue (dest: string, seq: number): string {
    if ((this.prefix < 0 || dest !== this.dest) && !this.setDest(dest)) return outboxKey(dest, seq)
    if (!Number.isSafeInteger(seq) || seq < 0) return outboxKey(dest, seq)
    const hi = Math.floor(seq / TWO_32)
    const lo = seq - hi * TWO_32
    digits(this.queueBuf, this.prefix, hi, 8)
    digits(this.queueBuf, this.prefix + 8, lo, 8)
    return latin1Slice.call(this.queueBuf, 0, this.prefix + 16)
  }

  /** expiryKey(exp, key) */
  index (exp: number, key: string): string {
    if (!Number.isSafeInteger(exp) || exp < 0 || exp >= MAX_12 || key.length > MAX_KEY) return expiryKey(exp, key)
    const out = this.indexBuf
    for (let k = 0; k < key.length; k++) {
      const c = key.charCodeAt(k)
      if (c > 0x7f) return expiryKey(exp, key)
      out[INDEX_HEAD + k] = c
    }
    digits(out, EXPIRY_PREFIX.length, exp, 12)
    return latin1Slice.call(out, 0, INDEX_HEAD + key.length)
  }

  /** Write `o!<dest>!` at the start of queueBuf; false when dest does not fit or is not ASCII. */
  private setDest (dest: string): boolean {
    const n = OUTBOX_PREFIX.length + dest.length + 1
    if (n + 16 > MAX_KEY) return false
    for (let k = 0; k < dest.length; k++) if (dest.charCodeAt(k) > 0x7f) return false
    this.prefix = -1
    this.queueBuf.write(OUTBOX_PREFIX, 0, 'latin1')
    this.queueBuf.write(dest, OUTBOX_PREFIX.length, 'latin1')
    this.queueBuf[n - 1] = 0x21 // '!'
    this.dest = dest
    this.prefix = n
    return true
  }
}
