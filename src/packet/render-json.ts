// The JSON text of renderEntry(entry), written straight from the stored bytes.
//
// The fast path reads the packet's DAG-CBOR itself and copies strings into
// the output without building objects. It takes only the plain shape stored
// packets have: definite lengths, minimal heads, map keys that are plain
// ASCII names, safe integers, true/false/null, well-formed UTF-8 text (a
// leading U+FEFF included: the decoders keep it). Anything else (floats, tags, byte strings where they
// would be rendered, odd keys, malformed data) falls back to
// JSON.stringify(renderEntry(...)), so the output is the same either way.
//
// The rendered fields come from the field table (fields.ts, through
// render.ts); CBOR heads are read by the shared cursor (cbor-cursor.ts).
import type { JsonBytes } from '../util/json-bytes.js'
import { latin1Slice } from '../util/slices.js'
import { CborCursor, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGINT, MAJOR_SIMPLE, MAJOR_TEXT, MAJOR_UINT, SIMPLE_FALSE, SIMPLE_TRUE } from './cbor-cursor.js'
import { BACKSLASH, QUOTE, writeText } from './json-text.js'
import { OPTIONAL_FIELDS, renderEntry, type PacketEntry } from './render.js'

type Cursor = CborCursor

/** deepest item rendered directly: a packet's own nesting (2) plus payload JSON values (fields.ts MAX_JSON_DEPTH) and room */
const MAX_DEPTH = 40
const COMMA = 0x2c
const COLON = 0x3a
const PROTO = ascii('__proto__')

function ascii (s: string): Uint8Array {
  return Uint8Array.from(s, (ch) => ch.charCodeAt(0))
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
  if (!c.next() || c.major !== MAJOR_TEXT || c.arg === 0) return -1
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

/**
 * Check (and, with `out`, write as JSON) one data item at c.pos. Without
 * `out` the item is only skipped: it is not rendered, so byte strings and
 * any text are fine there (a decoder accepts them).
 */
function item (b: Uint8Array, c: Cursor, out: JsonBytes | undefined, depth: number): boolean {
  if (depth > MAX_DEPTH || !c.next()) return false
  const n = c.arg
  switch (c.major) {
    case MAJOR_UINT: out?.ascii(String(n)); return true
    case MAJOR_NEGINT: {
      const v = -1 - n
      if (v < Number.MIN_SAFE_INTEGER) return false
      out?.ascii(String(v))
      return true
    }
    case MAJOR_BYTES: {
      if (out !== undefined || c.pos + n > b.length) return false
      c.pos += n
      return true
    }
    case MAJOR_TEXT: {
      const start = c.pos
      const end = start + n
      if (end > b.length) return false
      c.pos = end
      return out === undefined || writeText(b, start, end, out)
    }
    case MAJOR_ARRAY: return array(b, c, n, out, depth)
    case MAJOR_MAP: return map(b, c, n, out, depth)
    case MAJOR_SIMPLE: out?.ascii(n === SIMPLE_FALSE ? 'false' : n === SIMPLE_TRUE ? 'true' : 'null'); return true
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
  private readonly c = new CborCursor()
  /** value offset of each of FIELDS in the current packet, -1 when absent */
  private readonly at = new Array<number>(FIELDS.length).fill(-1)
  private readonly other: number[] = []
  private readonly names: NameMemo[] = []
  /** entries rendered through JSON.stringify(renderEntry(...)) because the fast path did not apply */
  fallbacks = 0

  /** `memoize`: keep each name's JSON for the entries after (a renderer of one entry has none after it) */
  constructor (private readonly label: (id: string) => string, private readonly memoize = true) {}

  /** Append the JSON text of renderEntry(entry, label) to `out`. */
  write (entry: PacketEntry, out: JsonBytes): void {
    const mark = out.length
    if (this.fast(entry, out)) return
    out.length = mark
    this.fallbacks++
    out.json(renderEntry(entry, this.label))
  }

  private fast (entry: PacketEntry, out: JsonBytes): boolean {
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
    c.reset(b)
    if (!c.next() || c.major !== MAJOR_MAP) return false
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
    if (this.memoize) this.names.push({ id: copyOf(b, id), carried: carried === undefined ? undefined : copyOf(b, carried), json: copyOf(out.bytes(), [mark, out.length - mark]) })
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
    for (let i = id[0]; i < id[0] + id[1]; i++) {
      const ch = b[i]
      if (ch < 0x20 || ch > 0x7e || ch === QUOTE || ch === BACKSLASH) return false // ids are plain ASCII
    }
    // one string in one native call (no view, no argument list; ASCII checked above)
    const idText = latin1Slice.call(b, id[0], id[0] + id[1])
    const known = this.label(idText)
    if (known !== idText) { out.json(known); return true }
    this.c.pos = fallbackAt
    return item(b, this.c, out, 1)
  }

  /** [offset, length] of the text value at `at`; undefined when it is no text. */
  private textAt (b: Uint8Array, at: number): Span | undefined {
    const c = this.c
    c.pos = at
    if (!c.next() || c.major !== MAJOR_TEXT || c.pos + c.arg > b.length) return undefined
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
export function renderEntryJson (entry: PacketEntry, label: (id: string) => string, out: JsonBytes): void {
  new EntryJsonRenderer(label, false).write(entry, out)
}

/**
 * The encoder of a page's entries (one JSON value per entry, index k): each
 * entry's renderEntry JSON, written by the byte renderer, live pages of one
 * entry too. Session 13 kept pages under 32 entries on renderEntry +
 * JSON.stringify, because in one process the byte renderer is slower for
 * its first ~10 renders; in a daemon following a live inbox (T1) the byte
 * renderer takes a single event's page 126-128 -> 77-87 µs p50 from the
 * inbox's append to the framed line (docs/PERFORMANCE.md, session 15).
 * `entriesJsonEncoderOfObjects` is the reference.
 */
export function entriesJsonEncoder (entries: readonly PacketEntry[], label: (id: string) => string): (k: number, out: JsonBytes) => void {
  // a live follower's page is mostly one entry: no name memo to build for it
  const render = new EntryJsonRenderer(label, entries.length > 1)
  return (k, out) => { render.write(entries[k], out) }
}

/** entriesJsonEncoder's reference: each entry through renderEntry and JSON.stringify (the same bytes). */
export function entriesJsonEncoderOfObjects (entries: readonly PacketEntry[], label: (id: string) => string): (k: number, out: JsonBytes) => void {
  return (k, out) => { out.json(renderEntry(entries[k], label)) }
}

/** About how many bytes the JSON of these entries takes (packet bytes, plus field names, ids twice, names). */
export function renderedJsonSize (entries: readonly PacketEntry[]): number {
  let bytes = 0
  for (const e of entries) bytes += e.packet.byteLength + 256
  return bytes
}
