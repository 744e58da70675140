// The binary framing of control-socket streams, for clients that ask for it
// (`inbox.follow` with framing "binary"; the CLI's `inbox --follow`): a page
// of inbox entries travels as their stored packet bytes instead of one JSON
// line each, so a replay costs neither the daemon's JSON rendering nor the
// client's JSON parse; the client renders each entry as renderEntry does (read
// straight into the rendered entry by render-fast.ts, the proof left unread:
// EntryRenderer), which the JSON stream's output equals.
//
// On the socket a binary frame is  0x00, u32 request id, u32 body length,
// body  (big-endian); a JSON line never starts with 0x00, so both kinds mix
// on one connection (the stream still ends with its JSON `end` line).
// A follow page body:
//   u32 entry count, u16 label count,
//   per label:  u16 id length, id, u16 name length, name   (UTF-8)
//   per entry:  f64 seq, f64 received (ms), u32 packet length, packet bytes
// The labels are the names this host knows for the page's from/to node ids
// (ids it knows no name for are left out: renderEntry then uses the name the
// packet carries, exactly as on the daemon).
import { decodeCbor } from '../util/cbor-decode.js'
import { CborCursor, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGINT, MAJOR_TAG, MAJOR_TEXT, MAJOR_UINT } from '../packet/cbor-cursor.js'
import type { Packet } from '../packet/types.js'
import { PacketDecoder } from '../packet/decode-fast.js'
import { renderEntry, renderPacket, type PacketEntry, type RenderedPacket } from '../packet/render.js'
import { RenderDecoder } from '../packet/render-fast.js'
import { MalformedFrameError } from '../util/errors.js'
import { FRAME_HEAD, FRAME_MARK, MAX_FRAME_BYTES } from './frame-head.js'

export { FRAME_HEAD, FRAME_MARK, MAX_FRAME_BYTES }

const MAX_DEPTH = 32
const utf8 = new TextEncoder()
/** keeps a leading U+FEFF, as the packet decoders do (cbor-decode.ts) */
const text = new TextDecoder('utf-8', { ignoreBOM: true })

/** Move the cursor past one whole item; false when it is outside the strict subset. */
function skipItem (c: CborCursor, depth: number): boolean {
  if (depth > MAX_DEPTH || !c.next()) return false
  const n = c.arg
  switch (c.major) {
    case MAJOR_BYTES:
    case MAJOR_TEXT:
      if (c.pos + n > c.end) return false
      c.pos += n
      return true
    case MAJOR_ARRAY:
      for (let i = 0; i < n; i++) if (!skipItem(c, depth + 1)) return false
      return true
    case MAJOR_MAP:
      for (let i = 0; i < 2 * n; i++) if (!skipItem(c, depth + 1)) return false
      return true
    case MAJOR_TAG:
      return skipItem(c, depth + 1)
    default:
      return true
  }
}

function textAt (c: CborCursor): string | undefined {
  const n = c.expect(MAJOR_TEXT)
  if (n < 0 || c.pos + n > c.end) return undefined
  const s = text.decode(c.bytes.subarray(c.pos, c.pos + n))
  c.pos += n
  return s
}

/** The from and to node ids of stored packet bytes, read without decoding the rest. */
export function partiesOf (bytes: Uint8Array, c = new CborCursor()): [string, string] | undefined {
  c.reset(bytes)
  const n = c.expect(MAJOR_MAP)
  let from: string | undefined
  let to: string | undefined
  for (let i = 0; i < n; i++) {
    const key = textAt(c)
    if (key === undefined) return fallback(bytes)
    if (key === 'from' || key === 'to') {
      const v = textAt(c)
      if (v === undefined) return fallback(bytes)
      if (key === 'from') from = v
      else to = v
    } else if (!skipItem(c, 1)) return fallback(bytes)
  }
  return from !== undefined && to !== undefined ? [from, to] : fallback(bytes)
}

/** Bytes the cursor does not take (never the case for stored packets): ask dag-cbor. */
function fallback (bytes: Uint8Array): [string, string] | undefined {
  try {
    const p = decodeCbor<Packet>(bytes)
    return typeof p.from === 'string' && typeof p.to === 'string' ? [p.from, p.to] : undefined
  } catch {
    return undefined
  }
}

/** The body of a follow page (at FRAME_HEAD: the frame's head is left for the stream to fill in). */
export function encodeFollowPage (entries: readonly PacketEntry[], label: (id: string) => string): Uint8Array {
  const names = new Map<string, Uint8Array>()
  const seen = new Set<string>()
  const cursor = new CborCursor()
  let size = FRAME_HEAD + 6
  for (const e of entries) {
    size += 20 + e.packet.byteLength
    for (const id of partiesOf(e.packet, cursor) ?? []) {
      if (seen.has(id)) continue
      seen.add(id)
      const name = label(id)
      if (name !== id) names.set(id, utf8.encode(name))
    }
  }
  const ids = new Map<string, Uint8Array>()
  for (const [id, name] of names) { const b = utf8.encode(id); ids.set(id, b); size += 4 + b.length + name.length }
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  let at = FRAME_HEAD
  view.setUint32(at, entries.length); at += 4
  view.setUint16(at, names.size); at += 2
  for (const [id, name] of names) {
    const idb = ids.get(id) as Uint8Array
    view.setUint16(at, idb.length); out.set(idb, at + 2); at += 2 + idb.length
    view.setUint16(at, name.length); out.set(name, at + 2); at += 2 + name.length
  }
  for (const e of entries) {
    view.setFloat64(at, e.seq); view.setFloat64(at + 8, e.received); view.setUint32(at + 16, e.packet.byteLength)
    out.set(e.packet, at + 20)
    at += 20 + e.packet.byteLength
  }
  return out
}

/**
 * The names of a page's node ids, found as encodeFollowPage finds them (in
 * order of first appearance, ids the host has no name for left out), with
 * the ids compared as bytes: each distinct id is decoded and labelled once.
 */
export class PageNames {
  private readonly ids: Uint8Array[] = []
  readonly names = new Map<string, Uint8Array>()
  private readonly c = new CborCursor()
  /** the last packet read the fast way, for sameAsLast: its bytes, where it starts, the length read */
  private last: Uint8Array | undefined
  private lastPos = 0
  private lastLen = 0
  /** ranges [start, end) (from the packet's start) of its bytes that are plain data: skipped strings' contents, integers' arguments */
  private readonly gaps: number[] = []
  constructor (private readonly label: (id: string) => string) {}

  /**
   * Note the from and to of the packet in bytes[pos, end of bytes), as
   * partiesOf reads them (from first). The map is read only up to the later
   * of the two (a stored packet was validated when stored: each key once, the
   * rest well-formed), so the proof and payload behind them cost nothing.
   * A packet whose bytes up to there equal the last one's outside its data
   * ranges (sameAsLast: a page's packets mostly share from, to and the
   * layout) has the same from and to: nothing to note.
   */
  add (bytes: Uint8Array, pos: number): void {
    if (this.sameAsLast(bytes, pos)) return
    this.last = undefined
    this.gaps.length = 0
    const c = this.c
    c.reset(bytes, pos)
    const n = c.expect(MAJOR_MAP)
    let from = -1
    let fromLen = 0
    let to = -1
    let toLen = 0
    for (let i = 0; i < n; i++) {
      const k = c.expect(MAJOR_TEXT)
      // a key that could decode to from/to other than byte for byte (a BOM): the reference way
      if (k < 0 || c.pos + k > c.end || bytes[c.pos] === 0xef) { this.slow(bytes.subarray(pos)); return }
      const key = k === 4 && bytes[c.pos] === 0x66 && bytes[c.pos + 1] === 0x72 && bytes[c.pos + 2] === 0x6f && bytes[c.pos + 3] === 0x6d
        ? 1
        : k === 2 && bytes[c.pos] === 0x74 && bytes[c.pos + 1] === 0x6f ? 2 : 0
      c.pos += k
      if (key === 0) { if (!this.skipNoting(bytes, pos)) { this.slow(bytes.subarray(pos)); return } continue }
      const v = c.expect(MAJOR_TEXT)
      if (v < 0 || c.pos + v > c.end) { this.slow(bytes.subarray(pos)); return }
      if (key === 1) { from = c.pos; fromLen = v } else { to = c.pos; toLen = v }
      c.pos += v
      // both found (canonical order puts them 2nd and 4th): the rest is not read
      if (from >= 0 && to >= 0) break
    }
    if (n < 0 || from < 0 || to < 0) { this.slow(bytes.subarray(pos)); return }
    this.id(bytes, from, fromLen)
    this.id(bytes, to, toLen)
    this.last = bytes
    this.lastPos = pos
    this.lastLen = c.pos - pos
  }

  /**
   * Skip the value of a key other than from/to, noting its data range: a
   * string's contents or an integer's argument bytes (a map, list or tag is
   * structure throughout: sameAsLast compares all of it).
   */
  private skipNoting (bytes: Uint8Array, pos: number): boolean {
    const c = this.c
    const at = c.pos
    const major = bytes[at] >>> 5
    if (!skipItem(c, 1)) return false
    if (major === MAJOR_TEXT || major === MAJOR_BYTES) this.gaps.push(c.pos - c.arg - pos, c.pos - pos)
    else if (major === MAJOR_UINT || major === MAJOR_NEGINT) this.gaps.push(at + 1 - pos, c.pos - pos)
    return true
  }

  /**
   * Whether the packet at bytes[pos] has the last fast-read packet's bytes
   * over the length read, except inside its data ranges. Then every head,
   * key, length and both ids are the same bytes at the same places, so add
   * would read the same from and to (the reference, partiesOf, too: the
   * data bytes decide no structure); a data byte that breaks a rule (an
   * integer not in its shortest form) would make both readers give up on
   * this packet, which notes nothing new either.
   */
  private sameAsLast (bytes: Uint8Array, pos: number): boolean {
    const last = this.last
    const len = this.lastLen
    if (last === undefined || pos + len > bytes.length) return false
    const gaps = this.gaps
    const base = this.lastPos - pos
    let i = 0
    for (let g = 0; g <= gaps.length; g += 2) {
      const stop = pos + (g < gaps.length ? gaps[g] : len)
      for (let k = pos + i; k < stop; k++) if (bytes[k] !== last[k + base]) return false
      if (g < gaps.length) i = gaps[g + 1]
    }
    return true
  }

  private id (bytes: Uint8Array, at: number, len: number): void {
    for (const known of this.ids) if (known.length === len && sameAt(bytes, at, known)) return
    const b = bytes.slice(at, at + len)
    this.ids.push(b)
    this.named(text.decode(b))
  }

  private named (id: string): void {
    if (this.names.has(id)) return
    const name = this.label(id)
    if (name !== id) this.names.set(id, utf8.encode(name))
  }

  /** bytes the fast reader does not take: partiesOf decides (never the case for stored packets) */
  private slow (packet: Uint8Array): void {
    this.last = undefined
    for (const id of partiesOf(packet) ?? []) this.named(id)
  }
}

function sameAt (b: Uint8Array, at: number, want: Uint8Array): boolean {
  // from the end: node ids share their first bytes
  for (let i = want.length - 1; i >= 0; i--) if (b[at + i] !== want[i]) return false
  return true
}

/** the leading bytes of an inbox value of format 1: format byte, received (f64 BE); the packet follows */
export const VALUE_HEADER = 9

/**
 * The body of a follow page made straight from stored inbox values of format
 * 1 ([0x01][received: f64 BE][packet], store/inbox-values.ts) with their
 * seqs: the same bytes as encodeFollowPage of the decoded entries (its
 * reference), with one copy of each value and no per-entry object. `alloc`
 * gives the frame's buffer, of exactly the size asked (a follower's pool).
 */
export function encodeFollowValues (seqs: readonly number[], values: readonly Uint8Array[], label: (id: string) => string, alloc: (size: number) => Buffer = Buffer.allocUnsafe): Uint8Array {
  const names = new PageNames(label)
  let size = FRAME_HEAD + 6
  for (const v of values) {
    size += 20 + v.byteLength - VALUE_HEADER
    names.add(v, VALUE_HEADER)
  }
  let labelBytes = 0
  const ids = new Map<string, Uint8Array>()
  for (const [id, name] of names.names) { const b = utf8.encode(id); ids.set(id, b); labelBytes += 4 + b.length + name.length }
  const out = alloc(size + labelBytes)
  out.fill(0, 0, FRAME_HEAD)
  let at = FRAME_HEAD
  out.writeUInt32BE(values.length, at); at += 4
  out.writeUInt16BE(names.names.size, at); at += 2
  for (const [id, name] of names.names) {
    const idb = ids.get(id) as Uint8Array
    out.writeUInt16BE(idb.length, at); out.set(idb, at + 2); at += 2 + idb.length
    out.writeUInt16BE(name.length, at); out.set(name, at + 2); at += 2 + name.length
  }
  for (let k = 0; k < values.length; k++) {
    const v = values[k]
    // the value copied so its packet lands at +20; its received (f64 BE, as the page has it) moved to +8
    out.set(v, at + 20 - VALUE_HEADER)
    for (let i = 0; i < 8; i++) out[at + 8 + i] = v[1 + i]
    out.writeDoubleBE(seqs[k], at)
    out.writeUInt32BE(v.byteLength - VALUE_HEADER, at + 16)
    at += 20 + v.byteLength - VALUE_HEADER
  }
  return out
}

/** The entries of a follow page body and the names of its node ids (views into `body`). */
export function decodeFollowPage (body: Uint8Array): { entries: PacketEntry[], labels: Map<string, string> } {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const need = (at: number, n: number): void => { if (at + n > body.length) throw new MalformedFrameError(`follow page cut short at byte ${at}`) }
  need(0, 6)
  const count = view.getUint32(0)
  const nLabels = view.getUint16(4)
  let at = 6
  const str = (): string => {
    need(at, 2)
    const n = view.getUint16(at)
    need(at + 2, n)
    const s = text.decode(body.subarray(at + 2, at + 2 + n))
    at += 2 + n
    return s
  }
  const labels = new Map<string, string>()
  for (let i = 0; i < nLabels; i++) { const id = str(); labels.set(id, str()) }
  const entries: PacketEntry[] = []
  for (let i = 0; i < count; i++) {
    need(at, 20)
    const len = view.getUint32(at + 16)
    need(at + 20, len)
    entries.push({ seq: view.getFloat64(at), received: view.getFloat64(at + 8), packet: body.subarray(at + 20, at + 20 + len) })
    at += 20 + len
  }
  if (at !== body.length) throw new MalformedFrameError(`follow page has ${body.length - at} bytes after its last entry`)
  return { entries, labels }
}

/** The seq of a follow page's last entry (undefined for an empty page), found by lengths alone: a pager asks for the next page before rendering this one. */
export function followPageLast (body: Uint8Array): number | undefined {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const need = (at: number, n: number): void => { if (at + n > body.length) throw new MalformedFrameError(`follow page cut short at byte ${at}`) }
  need(0, 6)
  const count = view.getUint32(0)
  let at = 6
  for (let i = view.getUint16(4) * 2; i > 0; i--) { need(at, 2); at += 2 + view.getUint16(at) }
  let last: number | undefined
  for (let i = 0; i < count; i++) {
    need(at, 20)
    last = view.getFloat64(at)
    at += 20 + view.getUint32(at + 16)
  }
  if (at !== body.length) throw new MalformedFrameError(`follow page has ${body.length - at} bytes after its last entry`)
  return last
}

/**
 * renderFollowPage's entries one at a time, each decoded from the page as it
 * is rendered (a large page does not hold all its entries and rendered
 * objects at once, so they die young); the page's layout is checked whole
 * before the first one.
 */
export function * eachFollowEntry (body: Uint8Array, renderer = new EntryRenderer()): Generator<RenderedPacket> {
  followPageLast(body)
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const count = view.getUint32(0)
  const labels = new Map<string, string>()
  let at = 6
  const str = (): string => { const n = view.getUint16(at); const s = text.decode(body.subarray(at + 2, at + 2 + n)); at += 2 + n; return s }
  for (let i = view.getUint16(4); i > 0; i--) { const id = str(); labels.set(id, str()) }
  const label = (id: string): string => labels.get(id) ?? id
  for (let i = 0; i < count; i++) {
    const len = view.getUint32(at + 16)
    const e: PacketEntry = { seq: view.getFloat64(at), received: view.getFloat64(at + 8), packet: body.subarray(at + 20, at + 20 + len) }
    at += 20 + len
    yield renderer.render(e, label)
  }
}

/** The rendered entries of a follow page: what the JSON stream sends for them. */
export function renderFollowPage (body: Uint8Array, renderer = new EntryRenderer()): RenderedPacket[] {
  const { entries, labels } = decodeFollowPage(body)
  const label = (id: string): string => labels.get(id) ?? id
  return entries.map((e) => renderer.render(e, label))
}

/**
 * How a page's entries are rendered: the render-only reader (render-fast.ts)
 * for the bytes the direct decoder takes; for any other bytes the direct
 * decoder's packet or, outside its subset, dag-cbor (renderEntry), as before.
 * A reader of a stream of pages keeps one (both keep the ids they saw).
 */
export class EntryRenderer {
  private readonly fast = new RenderDecoder()
  private decoder: PacketDecoder | undefined

  render (e: PacketEntry, label: (id: string) => string): RenderedPacket {
    const r = this.fast.render(e, label)
    if (r !== undefined) return r
    const p = (this.decoder ??= new PacketDecoder()).decode(e.packet)
    return p === undefined ? renderEntry(e, label) : renderPacket(p, e, label)
  }
}
