// The JSON text of renderEntry(entry), written straight from the stored bytes.
//
// The fast path reads the packet's DAG-CBOR itself and copies strings into
// the output without building objects. It takes only the plain shape stored
// packets have: definite lengths, minimal heads, map keys that are plain
// ASCII names, safe integers, true/false/null, well-formed UTF-8 text not
// starting with a BOM. Anything else (floats, tags, byte strings where they
// would be rendered, odd keys, malformed data) falls back to
// JSON.stringify(renderEntry(...)), so the output is the same either way.
import type { JsonBytes } from '../util/json-bytes.js'
import type { InboxEntry } from '../store/inbox.js'
import { OPTIONAL_FIELDS, renderEntry } from './render.js'

/** Where a reader stands in the packet bytes, and the last head read. */
interface Cursor { pos: number, major: number, arg: number }

const MAX_DEPTH = 32
const TWO_32 = 4294967296
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const SHORT_ESCAPES: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' }
const PROTO = ascii('__proto__')
/** bytes of text: copied as they are, escaped by JSON.stringify, or the lead of a multi-byte sequence */
const PLAIN = 0
const ESCAPE = 1
const MULTI = 2
const TEXT_CLASS = Uint8Array.from({ length: 256 }, (_, ch) => ch >= 0x80 ? MULTI : ch < 0x20 || ch === QUOTE || ch === BACKSLASH ? ESCAPE : PLAIN)

function ascii (s: string): Uint8Array {
  return Uint8Array.from(s, (ch) => ch.charCodeAt(0))
}

/** One CBOR head (strict: minimal argument); false for what the fast path leaves alone. */
function head (b: Uint8Array, c: Cursor): boolean {
  if (c.pos >= b.length) return false
  const ib = b[c.pos++]
  c.major = ib >> 5
  const minor = ib & 31
  if (c.major === 7) { c.arg = minor; return minor >= 20 && minor <= 22 } // false, true, null only
  if (minor < 24) { c.arg = minor; return true }
  const p = c.pos
  if (minor === 24) {
    if (p + 1 > b.length) return false
    c.arg = b[p]; c.pos += 1
    return c.arg >= 24
  }
  if (minor === 25) {
    if (p + 2 > b.length) return false
    c.arg = (b[p] << 8) | b[p + 1]; c.pos += 2
    return c.arg >= 256
  }
  if (minor === 26) {
    if (p + 4 > b.length) return false
    c.arg = u32(b, p); c.pos += 4
    return c.arg >= 65536
  }
  if (minor === 27) {
    if (p + 8 > b.length) return false
    const hi = u32(b, p)
    c.arg = hi * TWO_32 + u32(b, p + 4); c.pos += 8
    return hi > 0 && c.arg <= Number.MAX_SAFE_INTEGER
  }
  return false
}

function u32 (b: Uint8Array, p: number): number {
  return b[p] * 16777216 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3])
}

function sameBytes (b: Uint8Array, x: number, y: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (b[x + i] !== b[y + i]) return false
  return true
}

function equalsAt (b: Uint8Array, at: number, len: number, want: Uint8Array): boolean {
  if (len !== want.length) return false
  // from the end: node ids share their first bytes
  for (let i = len - 1; i >= 0; i--) if (b[at + i] !== want[i]) return false
  return true
}

/**
 * A map key the fast path takes, read at c.pos (c.pos moves past its text,
 * c.arg is its length): text of printable ASCII other than quote and
 * backslash (JSON.stringify writes it as it is), not starting with a digit
 * (JavaScript objects order integer-like keys first), not __proto__.
 * Returns the offset of the key's text, or -1.
 */
function plainKey (b: Uint8Array, c: Cursor): number {
  if (!head(b, c) || c.major !== 3 || c.arg === 0) return -1
  const start = c.pos
  const end = start + c.arg
  if (end > b.length) return -1
  const first = b[start]
  if (first >= 0x30 && first <= 0x39) return -1
  for (let i = start; i < end; i++) {
    const ch = b[i]
    if (ch < 0x20 || ch > 0x7e || ch === QUOTE || ch === BACKSLASH) return -1
  }
  if (equalsAt(b, start, c.arg, PROTO)) return -1
  c.pos = end
  return start
}

/** Whether the key b[start, start+len) is among the earlier keys of its map (`keys`: offset, length pairs). */
function repeated (b: Uint8Array, keys: number[], start: number, len: number): boolean {
  for (let k = 0; k < keys.length; k += 2) {
    if (keys[k + 1] === len && sameBytes(b, keys[k], start, len)) return true
  }
  return false
}

/** Length of the well-formed UTF-8 sequence at i (Unicode table 3-7), 0 if ill-formed. */
function utf8Length (b: Uint8Array, i: number, end: number): number {
  const b0 = b[i]
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(b, i + 1, end, 0x80, 0xbf) ? 2 : 0
  let lo = 0x80
  let hi = 0xbf
  if (b0 >= 0xe0 && b0 <= 0xef) {
    if (b0 === 0xe0) lo = 0xa0
    if (b0 === 0xed) hi = 0x9f
    return cont(b, i + 1, end, lo, hi) && cont(b, i + 2, end, 0x80, 0xbf) ? 3 : 0
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    if (b0 === 0xf0) lo = 0x90
    if (b0 === 0xf4) hi = 0x8f
    return cont(b, i + 1, end, lo, hi) && cont(b, i + 2, end, 0x80, 0xbf) && cont(b, i + 3, end, 0x80, 0xbf) ? 4 : 0
  }
  return 0
}

function cont (b: Uint8Array, i: number, end: number, lo: number, hi: number): boolean {
  return i < end && b[i] >= lo && b[i] <= hi
}

/** Texts at least this long are scanned four bytes at a time. */
const WORD_SCAN = 32

/** The end of the run of PLAIN bytes starting at i (at most `end`). */
function plainRun (b: Uint8Array, i: number, end: number): number {
  if (end - i >= WORD_SCAN) {
    while (((b.byteOffset + i) & 3) !== 0 && TEXT_CLASS[b[i]] === PLAIN) i++
    if (((b.byteOffset + i) & 3) === 0) i = plainWords(b, i, end)
  }
  while (i < end && TEXT_CLASS[b[i]] === PLAIN) i++
  return i
}

/**
 * Skip whole 4-byte words with no byte that is >= 0x80, < 0x20, '"' or '\\'
 * (bit tricks that never miss such a byte); i is 4-aligned in the buffer.
 * Returns where the byte-by-byte scan goes on.
 */
function plainWords (b: Uint8Array, i: number, end: number): number {
  const words = (end - i) >> 2
  const w32 = new Uint32Array(b.buffer, b.byteOffset + i, words)
  let k = 0
  for (; k < words; k++) {
    const w = w32[k]
    const quote = w ^ 0x22222222
    const backslash = w ^ 0x5c5c5c5c
    const special = (w & 0x80808080) | // a byte >= 0x80
      ((w - 0x20202020) & ~w & 0x80808080) | // a byte < 0x20
      ((quote - 0x01010101) & ~quote & 0x80808080) | // a byte == '"'
      ((backslash - 0x01010101) & ~backslash & 0x80808080) // a byte == '\\'
    if (special !== 0) break
  }
  return i + k * 4
}

/**
 * b[start, end) as a JSON string: well-formed UTF-8 is copied, the characters
 * JSON.stringify escapes are escaped the same way (ECMA-262 QuoteJSONString).
 * False for ill-formed UTF-8 and a leading BOM (decoders replace or drop those).
 */
function writeText (b: Uint8Array, start: number, end: number, out: JsonBytes): boolean {
  if (end - start >= 3 && b[start] === 0xef && b[start + 1] === 0xbb && b[start + 2] === 0xbf) return false
  out.byte(QUOTE)
  let run = start
  let i = start
  while (i < end) {
    i = plainRun(b, i, end)
    if (i === end) break
    if (TEXT_CLASS[b[i]] === ESCAPE) {
      const ch = b[i]
      out.copy(b, run, i)
      out.ascii(SHORT_ESCAPES[ch] ?? '\\u00' + ch.toString(16).padStart(2, '0'))
      run = ++i
    } else {
      const len = utf8Length(b, i, end)
      if (len === 0) return false
      i += len
    }
  }
  out.copy(b, run, end)
  out.byte(QUOTE)
  return true
}

/**
 * Check (and, with `out`, write as JSON) one data item at c.pos. Without
 * `out` the item is only skipped: it is not rendered, so byte strings and
 * any text are fine there (a decoder accepts them).
 */
function item (b: Uint8Array, c: Cursor, out: JsonBytes | undefined, depth: number): boolean {
  if (depth > MAX_DEPTH || !head(b, c)) return false
  const n = c.arg
  switch (c.major) {
    case 0: out?.ascii(String(n)); return true
    case 1: {
      const v = -1 - n
      if (v < Number.MIN_SAFE_INTEGER) return false
      out?.ascii(String(v))
      return true
    }
    case 2: {
      if (out !== undefined || c.pos + n > b.length) return false
      c.pos += n
      return true
    }
    case 3: {
      const start = c.pos
      const end = start + n
      if (end > b.length) return false
      c.pos = end
      return out === undefined || writeText(b, start, end, out)
    }
    case 4: return array(b, c, n, out, depth)
    case 5: return map(b, c, n, out, depth)
    case 7: out?.ascii(n === 20 ? 'false' : n === 21 ? 'true' : 'null'); return true
    default: return false // tags
  }
}

function array (b: Uint8Array, c: Cursor, n: number, out: JsonBytes | undefined, depth: number): boolean {
  out?.byte(0x5b)
  for (let i = 0; i < n; i++) {
    if (i > 0) out?.byte(COMMA)
    if (!item(b, c, out, depth + 1)) return false
  }
  out?.byte(0x5d)
  return true
}

function map (b: Uint8Array, c: Cursor, n: number, out: JsonBytes | undefined, depth: number): boolean {
  const keys: number[] = []
  out?.byte(0x7b)
  for (let i = 0; i < n; i++) {
    const start = plainKey(b, c)
    if (start < 0 || repeated(b, keys, start, c.arg)) return false
    keys.push(start, c.arg)
    if (out !== undefined) {
      if (i > 0) out.byte(COMMA)
      out.byte(QUOTE); out.copy(b, start, c.pos); out.byte(QUOTE); out.byte(COLON)
    }
    if (!item(b, c, out, depth + 1)) return false
  }
  out?.byte(0x7d)
  return true
}

/** The top-level fields renderEntry reads, in the order it renders the fixed ones. */
const ID = 0
const FROM = 1
const TO = 2
const SIGNAL = 3
const TS = 6
const FROM_NAME = 7
const TO_NAME = 8
const FIRST_OPTIONAL = 9
const FIELDS = ['id', 'from', 'to', 'signal', 'payload', 'scope', 'ts', 'from_name', 'to_name', ...OPTIONAL_FIELDS]
const FIELD_KEYS = FIELDS.map(ascii)
/** FIELDS indexes by key length, first and last byte (no two fields share these), to find a key's field with one comparison */
const FIELD_BY_HEAD = new Map<number, number>(FIELDS.map((f, k) => [keyHash(f.length, f.charCodeAt(0), f.charCodeAt(f.length - 1)), k]))

function keyHash (len: number, first: number, last: number): number {
  return (len * 256 + first) * 256 + last
}

function fieldIndex (b: Uint8Array, start: number, len: number): number {
  const f = FIELD_BY_HEAD.get(keyHash(len, b[start], b[start + len - 1]))
  return f !== undefined && equalsAt(b, start, len, FIELD_KEYS[f]) ? f : -1
}

/** `,"name":` for each rendered field */
const FIELD_PREFIX = FIELDS.map((f) => ascii(`,"${f}":`))
const FROM_ID_PREFIX = ascii(',"from_id":')
const TO_ID_PREFIX = ascii(',"to_id":')
const FROM_PREFIX = ascii(',"from":')
const TO_PREFIX = ascii(',"to":')
const RECEIVED_PREFIX = ',"received":'

/** A node name as rendered, remembered for the ids (and carried names) seen in one page. */
interface NameMemo { id: Uint8Array, carried: Uint8Array | undefined, json: Uint8Array }

/**
 * Renders inbox entries as the JSON of renderEntry, into JsonBytes. Names are
 * looked up once per id and carried name while the renderer lives (one page:
 * rendering a page is synchronous, so the answers cannot change within it).
 */
export class EntryJsonRenderer {
  private readonly c: Cursor = { pos: 0, major: 0, arg: 0 }
  /** value offset of each of FIELDS in the current packet, -1 when absent */
  private readonly at = new Array<number>(FIELDS.length).fill(-1)
  private readonly other: number[] = []
  private readonly names: NameMemo[] = []
  /** entries rendered through JSON.stringify(renderEntry(...)) because the fast path did not apply */
  fallbacks = 0

  constructor (private readonly label: (id: string) => string) {}

  /** Append the JSON text of renderEntry(entry, label) to `out`. */
  write (entry: InboxEntry, out: JsonBytes): void {
    const mark = out.length
    if (this.fast(entry, out)) return
    out.length = mark
    this.fallbacks++
    out.json(renderEntry(entry, this.label))
  }

  private fast (entry: InboxEntry, out: JsonBytes): boolean {
    const b = entry.packet
    if (!this.scan(b)) return false
    const at = this.at
    out.ascii('{"seq":')
    out.ascii(jsonNumber(entry.seq))
    if (!this.field(b, FIELD_PREFIX[ID], at[ID], out)) return false
    if (!this.name(b, FROM_PREFIX, at[FROM], at[FROM_NAME], out)) return false
    if (!this.field(b, FROM_ID_PREFIX, at[FROM], out)) return false
    if (!this.name(b, TO_PREFIX, at[TO], at[TO_NAME], out)) return false
    if (!this.field(b, TO_ID_PREFIX, at[TO], out)) return false
    for (let f = SIGNAL; f <= TS; f++) {
      if (!this.field(b, FIELD_PREFIX[f], at[f], out)) return false
    }
    out.ascii(RECEIVED_PREFIX)
    out.ascii(jsonNumber(entry.received))
    for (let f = FIRST_OPTIONAL; f < FIELDS.length; f++) {
      if (at[f] >= 0 && !this.field(b, FIELD_PREFIX[f], at[f], out)) return false
    }
    out.byte(0x7d)
    return true
  }

  /** Check the whole packet and note where the rendered fields are; false when the fast path does not apply. */
  private scan (b: Uint8Array): boolean {
    const c = this.c
    const at = this.at
    at.fill(-1)
    this.other.length = 0
    c.pos = 0
    if (!head(b, c) || c.major !== 5) return false
    for (let i = c.arg; i > 0; i--) {
      const start = plainKey(b, c)
      if (start < 0) return false
      const len = c.arg
      const f = fieldIndex(b, start, len)
      if (f >= 0) {
        if (at[f] >= 0) return false
        at[f] = c.pos
      } else {
        if (repeated(b, this.other, start, len)) return false
        this.other.push(start, len)
      }
      if (!item(b, c, undefined, 1)) return false
    }
    if (c.pos !== b.length) return false
    for (let f = ID; f <= TS; f++) if (at[f] < 0) return false
    return true
  }

  private field (b: Uint8Array, prefix: Uint8Array, valueAt: number, out: JsonBytes): boolean {
    out.append(prefix)
    this.c.pos = valueAt
    return item(b, this.c, out, 1)
  }

  /** `from`/`to` as nameOf renders them: the known name, else the carried name, else the id. */
  private name (b: Uint8Array, prefix: Uint8Array, idAt: number, carriedAt: number, out: JsonBytes): boolean {
    const id = this.textAt(b, idAt)
    if (id === undefined) return false
    let carried: Span | undefined
    if (carriedAt >= 0) {
      carried = this.textAt(b, carriedAt)
      if (carried === undefined) return false
    }
    out.append(prefix)
    const memo = this.memo(b, id, carried)
    if (memo !== undefined) { out.append(memo.json); return true }
    const mark = out.length
    if (!this.nameJson(b, id, carriedAt >= 0 ? carriedAt : idAt, out)) return false
    this.names.push({ id: copyOf(b, id), carried: carried === undefined ? undefined : copyOf(b, carried), json: copyOf(out.bytes(), [mark, out.length - mark]) })
    return true
  }

  private memo (b: Uint8Array, id: Span, carried: Span | undefined): NameMemo | undefined {
    for (const m of this.names) {
      if (!sameSpan(b, id, m.id)) continue
      if (carried === undefined ? m.carried === undefined : m.carried !== undefined && sameSpan(b, carried, m.carried)) return m
    }
    return undefined
  }

  /** The name's JSON: label(id) when it knows better, else the text value at `fallbackAt` (carried name or id). */
  private nameJson (b: Uint8Array, id: Span, fallbackAt: number, out: JsonBytes): boolean {
    let idText = ''
    for (let i = id[0]; i < id[0] + id[1]; i++) {
      const ch = b[i]
      if (ch < 0x20 || ch > 0x7e || ch === QUOTE || ch === BACKSLASH) return false // ids are plain ASCII
      idText += String.fromCharCode(ch)
    }
    const known = this.label(idText)
    if (known !== idText) { out.json(known); return true }
    this.c.pos = fallbackAt
    return item(b, this.c, out, 1)
  }

  /** [offset, length] of the text value at `at`; undefined when it is no text. */
  private textAt (b: Uint8Array, at: number): Span | undefined {
    const c = this.c
    c.pos = at
    if (!head(b, c) || c.major !== 3 || c.pos + c.arg > b.length) return undefined
    return [c.pos, c.arg]
  }
}

/** [offset, length] of some bytes of a packet */
type Span = [number, number]

function sameSpan (b: Uint8Array, s: Span, want: Uint8Array): boolean {
  return equalsAt(b, s[0], s[1], want)
}

function copyOf (b: Uint8Array, s: Span): Uint8Array {
  return new Uint8Array(b.subarray(s[0], s[0] + s[1]))
}

function jsonNumber (n: number): string {
  return Number.isFinite(n) ? String(n) : 'null'
}

/** Append the JSON text of renderEntry(entry, label) to `out` (one entry; a page uses one EntryJsonRenderer). */
export function renderEntryJson (entry: InboxEntry, label: (id: string) => string, out: JsonBytes): void {
  new EntryJsonRenderer(label).write(entry, out)
}
