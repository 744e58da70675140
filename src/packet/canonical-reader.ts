// The reading half of the direct packet decoder (decode-fast.ts): CBOR heads,
// strings, map keys in canonical order, and the payload's JSON values and
// options. Anything outside the canonical subset throws NOT_CANONICAL (the
// decoder then leaves the bytes to dag-cbor, which decides and names the error).
import { Buffer, isUtf8 } from 'node:buffer'
import { keyOrder } from './canonical.js'
import { utf8Slice } from '../util/slices.js'
import { CborCursor, FALSE, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGINT, MAJOR_SIMPLE, MAJOR_TEXT, MAJOR_UINT, TRUE } from './cbor-cursor.js'
import { MAX_ID_FIELD, MAX_JSON_DEPTH, MAX_LIST_STRING, MAX_OPTIONS, MAX_TEXT_FIELD } from './fields.js'
import type { JsonValue, OptionValue } from './types.js'

/** Thrown inside the reader for anything outside the canonical subset (one instance: no stack is captured). */
class NotCanonical extends Error {}
export const NOT_CANONICAL = new NotCanonical('not in the canonical packet subset')

export function out (): never { throw NOT_CANONICAL }

/**
 * strings up to this many bytes (map keys, enum values) are read by a loop
 * while they are ASCII; longer ones natively (a long concatenated string is
 * slow to hash, and node ids are looked up in a set)
 */
const SHORT_STRING = 16

/** The keys one map may have, in canonical order. */
export interface KeyTable {
  readonly names: readonly string[]
  readonly bytes: readonly Uint8Array[]
}

export function keyTable (keys: readonly string[]): KeyTable {
  const names = [...keys].sort(keyOrder)
  return { names, bytes: names.map((k) => Uint8Array.from(Buffer.from(k, 'latin1'))) }
}

const OPTION_KEYS = keyTable(['id', 'label', 'description'])
const NULL = 0xf6

/** The reader of canonical packet bytes, without the packet-specific fields (decode-fast.ts adds those). */
export class CanonicalReader extends CborCursor {
  /** The argument of a head of `major`: minimal, definite, a safe integer. */
  head (major: number): number {
    const n = this.expect(major)
    return n >= 0 ? n : out()
  }

  /** A count of items that follow, each at least one byte. */
  count (major: number): number {
    const n = this.head(major)
    if (n > this.end - this.pos) out()
    return n
  }

  uint (): number { return this.head(MAJOR_UINT) }

  bool (): boolean {
    const b = this.bytes[this.pos]
    if (b !== TRUE && b !== FALSE) out()
    this.pos++
    return b === TRUE
  }

  text (): string {
    const n = this.head(MAJOR_TEXT)
    const s = this.pos
    if (n > this.end - s) out()
    this.pos = s + n
    if (n > SHORT_STRING) return this.utf8(s, s + n)
    const d = this.bytes
    let str = ''
    for (let i = s; i < s + n; i++) {
      const c = d[i]
      if (c >= 0x80) return this.utf8(s, s + n)
      str += String.fromCharCode(c)
    }
    return str
  }

  private utf8 (s: number, e: number): string {
    const d = this.bytes
    if (!isUtf8(d.subarray(s, e))) out()
    return utf8Slice.call(d, s, e)
  }

  /** A copy of a byte string (as cborg gives: a plain Uint8Array owning its memory). */
  byteString (): Uint8Array {
    const n = this.head(MAJOR_BYTES)
    const s = this.pos
    if (n > this.end - s) out()
    this.pos = s + n
    return this.bytes.slice(s, s + n)
  }

  /**
   * The index in `table` of the next map key, which must come after the key
   * at `prev` (so keys are in canonical order and none repeats). Every known
   * key is shorter than 24 bytes, so its head is the one byte 0x61..0x77.
   */
  key (table: KeyTable, prev: number): number {
    const d = this.bytes
    const p = this.pos
    if (p >= this.end) out()
    const b = d[p]
    if (b < 0x61 || b > 0x77) out()
    const n = b - 0x60
    if (n > this.end - p - 1) out()
    const keys = table.bytes
    for (let i = prev + 1; i < keys.length; i++) {
      const k = keys[i]
      if (k.length > n) break
      if (k.length < n) continue
      let j = 0
      while (j < n && d[p + 1 + j] === k[j]) j++
      if (j === n) { this.pos = p + 1 + n; return i }
    }
    return out()
  }

  /** A string of 1..max characters. */
  str (max = MAX_ID_FIELD): string {
    const v = this.text()
    if (v.length === 0 || v.length > max) out()
    return v
  }

  /** A string of 0..max characters. */
  upTo (max: number): string {
    const v = this.text()
    if (v.length > max) out()
    return v
  }

  /** context / decision / result: a string (the common case, read as before) or a JSON structure. */
  value (): JsonValue {
    if (this.pos < this.end && this.bytes[this.pos] >>> 5 === MAJOR_TEXT) return this.upTo(MAX_TEXT_FIELD)
    return this.json(0)
  }

  /** A JSON value nested in `depth` containers; floats, tags, byte strings and __proto__ keys are left to dag-cbor. */
  json (depth: number): JsonValue {
    if (this.pos >= this.end) out()
    const ib = this.bytes[this.pos]
    switch (ib >>> 5) {
      case MAJOR_TEXT: return this.upTo(MAX_TEXT_FIELD)
      case MAJOR_UINT: return this.uint()
      case MAJOR_NEGINT: {
        const n = this.head(MAJOR_NEGINT)
        return n < Number.MAX_SAFE_INTEGER ? -1 - n : out()
      }
      case MAJOR_SIMPLE:
        if (ib !== TRUE && ib !== FALSE && ib !== NULL) out()
        this.pos++
        return ib === NULL ? null : ib === TRUE
      case MAJOR_ARRAY: {
        if (depth >= MAX_JSON_DEPTH) out()
        const n = this.count(MAJOR_ARRAY)
        const list: JsonValue[] = []
        for (let i = 0; i < n; i++) list.push(this.json(depth + 1))
        return list
      }
      case MAJOR_MAP: return this.object(depth)
      default: return out()
    }
  }

  /** A map with text keys in canonical order (encoded key shorter first, then bytewise), none repeated. */
  private object (depth: number): JsonValue {
    if (depth >= MAX_JSON_DEPTH) out()
    const n = this.count(MAJOR_MAP)
    const obj: Record<string, JsonValue> = {}
    let prevStart = -1
    let prevLen = 0
    for (let i = 0; i < n; i++) {
      const start = this.pos
      const key = this.text()
      const len = this.pos - start
      if (prevStart >= 0 && !this.after(prevStart, prevLen, start, len)) out()
      if (key === '__proto__') out()
      prevStart = start
      prevLen = len
      obj[key] = this.json(depth + 1)
    }
    return obj
  }

  /** Whether the encoded key at b comes strictly after the one at a in canonical order. */
  private after (a: number, aLen: number, b: number, bLen: number): boolean {
    if (aLen !== bLen) return bLen > aLen
    const d = this.bytes
    for (let i = 0; i < aLen; i++) if (d[a + i] !== d[b + i]) return d[b + i] > d[a + i]
    return false
  }

  /** ESCALATE's options: 1..MAX_OPTIONS strings or {id, label, description?}. */
  options (): OptionValue[] {
    const n = this.count(MAJOR_ARRAY)
    if (n < 1 || n > MAX_OPTIONS) out()
    const list: OptionValue[] = []
    for (let i = 0; i < n; i++) {
      if (this.pos < this.end && this.bytes[this.pos] >>> 5 === MAJOR_MAP) list.push(this.option())
      else list.push(this.upTo(MAX_LIST_STRING))
    }
    return list
  }

  private option (): OptionValue {
    const n = this.count(MAJOR_MAP)
    let id: string | undefined
    let label: string | undefined
    let description: string | undefined
    let k = -1
    for (let i = 0; i < n; i++) {
      k = this.key(OPTION_KEYS, k)
      const name = OPTION_KEYS.names[k]
      if (name === 'id') id = this.str(MAX_ID_FIELD)
      else if (name === 'label') label = this.upTo(MAX_LIST_STRING)
      else description = this.upTo(MAX_LIST_STRING)
    }
    if (id === undefined || label === undefined) return out()
    return description === undefined ? { id, label } : { id, label, description }
  }

}
