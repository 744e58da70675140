// A direct encoder for the value shapes a packet has (maps with ASCII keys,
// strings, safe integers, booleans, null, byte strings, lists), giving exactly the
// bytes `@ipld/dag-cbor` gives: minimal-length heads, map keys sorted by
// length then bytewise. Anything outside those shapes (a non-ASCII key, a lone
// surrogate, a float, undefined, a CID) is handed to `@ipld/dag-cbor` whole, so
// the output (or the error) is always dag-cbor's. test/packet/canonical.test.ts
// checks byte equality against dag-cbor.
import * as cbor from '@ipld/dag-cbor'

const LONE_SURROGATE = /[\uD800-\uDFFF]/
/** strings up to this many code units try the character-by-character ASCII path (below 256: a one- or two-byte head) */
const SHORT_TEXT = 64
/** maps of up to this many keys are sorted by insertion */
const SORT_BY_INSERTION = 32

/** a value outside the direct encoder's shapes: dag-cbor decides it */
export class Unsupported extends Error {}

/** The output of a direct encode: a growing buffer and the position written to. */
export class Writer {
  buf: Buffer
  pos = 0

  constructor (buf: Buffer) { this.buf = buf }

  room (n: number): void {
    if (this.pos + n <= this.buf.length) return
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.pos + n))
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }

  head (major: number, n: number): void {
    this.room(9)
    const m = major << 5
    if (n < 24) { this.buf[this.pos++] = m | n } else if (n < 0x100) {
      this.buf[this.pos++] = m | 24; this.buf[this.pos++] = n
    } else if (n < 0x10000) {
      this.buf[this.pos++] = m | 25; this.buf.writeUInt16BE(n, this.pos); this.pos += 2
    } else if (n < 0x100000000) {
      this.buf[this.pos++] = m | 26; this.buf.writeUInt32BE(n, this.pos); this.pos += 4
    } else {
      this.buf[this.pos++] = m | 27
      this.buf.writeUInt32BE(Math.floor(n / 0x100000000), this.pos)
      this.buf.writeUInt32BE(n >>> 0, this.pos + 4)
      this.pos += 8
    }
  }

  text (s: string): void {
    if (s.length <= SHORT_TEXT && this.shortAscii(s)) return
    const n = Buffer.byteLength(s, 'utf8')
    // every character outside ASCII takes more bytes than code units, so n === length means ASCII: no surrogate to look for
    const ascii = n === s.length
    if (!ascii && LONE_SURROGATE.test(s)) throw new Unsupported()
    this.head(3, n)
    this.room(n)
    this.pos += ascii ? this.buf.write(s, this.pos, n, 'latin1') : this.buf.write(s, this.pos, n, 'utf8')
  }

  /**
   * A short ASCII string (keys, ids, names, enums: most strings of a packet)
   * written character by character, without the native calls; false (nothing
   * written) at the first character outside ASCII.
   */
  private shortAscii (s: string): boolean {
    const len = s.length
    this.room(len + 2)
    const buf = this.buf
    const start = this.pos + (len < 24 ? 1 : 2)
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i)
      if (c >= 0x80) return false
      buf[start + i] = c
    }
    // the head: a byte length below 24 fits in the initial byte, up to 255 in one more
    if (len < 24) buf[this.pos] = 0x60 | len
    else { buf[this.pos] = 0x78; buf[this.pos + 1] = len }
    this.pos = start + len
    return true
  }

  /** bytes written as they are (a CBOR item encoded beforehand, e.g. a map key with its head) */
  raw (b: Uint8Array): void {
    const n = b.length
    this.room(n)
    const buf = this.buf
    const at = this.pos
    for (let i = 0; i < n; i++) buf[at + i] = b[i]
    this.pos = at + n
  }

  bytes (b: Uint8Array): void {
    this.head(2, b.byteLength)
    this.room(b.byteLength)
    this.buf.set(b, this.pos)
    this.pos += b.byteLength
  }
}

/** Canonical key order: shorter first, then bytewise (keys are ASCII here). */
export function keyOrder (a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : (a < b ? -1 : a > b ? 1 : 0)
}

/** Whether every character of `s` is ASCII (a short key: a loop, not a regular expression). */
function isAscii (s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false
  return true
}

/** keys.sort(keyOrder), by insertion: a packet's maps have a few to a dozen keys, where this beats the comparator calls of Array#sort */
function sortKeys (keys: string[]): void {
  if (keys.length > SORT_BY_INSERTION) { keys.sort(keyOrder); return }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]
    let j = i - 1
    while (j >= 0 && keyOrder(keys[j], k) > 0) { keys[j + 1] = keys[j]; j-- }
    keys[j + 1] = k
  }
}

function writeMap (w: Writer, v: Record<string, unknown>): void {
  const keys = Object.keys(v)
  for (const k of keys) if (!isAscii(k)) throw new Unsupported()
  sortKeys(keys)
  w.head(5, keys.length)
  for (const k of keys) { w.text(k); writeValue(w, v[k]) }
}

/** Write one value (throws Unsupported for anything outside the direct encoder's shapes). */
export function writeValue (w: Writer, v: unknown): void {
  if (typeof v === 'string') return w.text(v)
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Unsupported()
    return v >= 0 ? w.head(0, v) : w.head(1, -1 - v)
  }
  if (typeof v === 'boolean') { w.room(1); w.buf[w.pos++] = v ? 0xf5 : 0xf4; return }
  if (v === null) { w.room(1); w.buf[w.pos++] = 0xf6; return }
  if (v instanceof Uint8Array) return w.bytes(v)
  if (Array.isArray(v)) { w.head(4, v.length); for (const x of v) writeValue(w, x); return }
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) return writeMap(w, v as Record<string, unknown>)
  throw new Unsupported()
}

/** one scratch buffer that grew past this is not kept */
const SCRATCH_KEEP = 1024 * 1024
const SCRATCH_START = 16 * 1024
/** the first buffer of a one-off encode (from Node's buffer pool) */
const ONE_OFF_START = 2048

/**
 * The canonical encoder with its own scratch space, reused by every call
 * (encoding is synchronous): whoever encodes many packets owns one.
 */
export class CanonicalEncoder {
  private scratch: Buffer | undefined

  /** Deterministic DAG-CBOR of `value`, byte-identical to `@ipld/dag-cbor`'s encode. */
  encode (value: unknown): Uint8Array {
    const w = this.writer()
    try {
      return encodeWith(w, value)
    } finally {
      this.keep(w)
    }
  }

  /**
   * The same bytes as encode, after `room` bytes left free for the caller in
   * the same new buffer: that whole buffer (room, then the encoding), or
   * undefined when the value is outside the direct encoder's shapes (encode
   * then takes dag-cbor's path)
   */
  encodeAfter (room: number, value: unknown): Uint8Array | undefined {
    const w = this.writer()
    try {
      writeValue(w, value)
      return copyOut(w, room)
    } catch (err) {
      if (err instanceof Unsupported) return undefined
      throw err
    } finally {
      this.keep(w)
    }
  }

  /**
   * The bytes `write` writes of `value` (false: it wrote nothing usable),
   * after `room` free bytes in one new buffer as encodeAfter; undefined when
   * it returned false or threw (the caller then takes its reference path)
   */
  encodeDirectAfter<T> (room: number, write: (w: Writer, value: T) => boolean, value: T): Uint8Array | undefined {
    const w = this.writer()
    try {
      return write(w, value) ? copyOut(w, room) : undefined
    } catch {
      return undefined
    } finally {
      this.keep(w)
    }
  }

  private writer (): Writer {
    this.scratch ??= Buffer.allocUnsafeSlow(SCRATCH_START)
    return new Writer(this.scratch)
  }

  /** keep a scratch buffer that grew, up to a bound */
  private keep (w: Writer): void {
    if (w.buf !== this.scratch && w.buf.length <= SCRATCH_KEEP) this.scratch = w.buf
  }
}

/** What w wrote, in a new buffer after `room` bytes. */
function copyOut (w: Writer, room: number): Uint8Array {
  const out = new Uint8Array(room + w.pos)
  // a plain view of the written part (Buffer#subarray builds a Buffer object)
  out.set(new Uint8Array(w.buf.buffer, w.buf.byteOffset, w.pos), room)
  return out
}

function encodeWith (w: Writer, value: unknown): Uint8Array {
  try {
    writeValue(w, value)
  } catch (err) {
    if (err instanceof Unsupported) return cbor.encode(value)
    throw err
  }
  return copyOut(w, 0)
}

/** Deterministic DAG-CBOR of `value`, byte-identical to `@ipld/dag-cbor`'s encode (one-off: no scratch is kept). */
export function encodeCanonical (value: unknown): Uint8Array {
  return encodeWith(new Writer(Buffer.allocUnsafe(ONE_OFF_START)), value)
}
