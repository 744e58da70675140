// inbox.read's binary frame built one stored value at a time (follow-frames.ts
// has the frame's layout and its reference, encodeFollowValues): each value is
// copied in as the store hands it over, so a page of values is never held.
import { encodeFollowValues, FRAME_HEAD, PageNames, VALUE_HEADER } from './follow-frames.js'

const utf8 = new TextEncoder()
/** the format byte of the values taken (ENTRY_FORMAT, store/inbox-values.ts) */
const VALUE_FORMAT = 1

/** bytes a FollowFrameBuilder keeps free before its first entry for the frame's head, count and labels */
const BUILD_RESERVE = 4096

/**
 * encodeFollowValues one stored value at a time (what `inbox.read` uses): each
 * value of format 1 is copied into the frame as soon as it is read, so it dies
 * young instead of waiting for the whole page, and the labels are written in
 * front of the entries at the end. The same bytes as encodeFollowValues of the
 * same seqs and values, its reference (test/control/follow-frames.test.ts).
 * The frame is a view into a buffer from `alloc` (a pool's: its own
 * ArrayBuffer, maybe not at offset 0).
 */
export class FollowFrameBuilder {
  private readonly names: PageNames
  private buf: Buffer | undefined
  private at = BUILD_RESERVE
  private count = 0

  /** `entries` and `maxBytes` (of stored values): what the page may hold, for the first buffer's size */
  constructor (private readonly label: (id: string) => string, private readonly alloc: (size: number) => Buffer = Buffer.allocUnsafe, private readonly entries = 1, private readonly maxBytes = Number.POSITIVE_INFINITY) {
    this.names = new PageNames(label)
  }

  /** Add the stored value of `seq`; false (nothing added) when it is not of format 1 (the frame must then be built the reference way). */
  add (seq: number, v: Uint8Array): boolean {
    if (v[0] !== VALUE_FORMAT) return false
    const need = 20 + v.byteLength - VALUE_HEADER
    if (this.buf === undefined || this.at + need > this.buf.byteLength) this.grow(need)
    const out = this.buf as Buffer
    const at = this.at
    this.names.add(v, VALUE_HEADER)
    out.set(v, at + 20 - VALUE_HEADER)
    for (let i = 0; i < 8; i++) out[at + 8 + i] = v[1 + i]
    out.writeDoubleBE(seq, at)
    out.writeUInt32BE(v.byteLength - VALUE_HEADER, at + 16)
    this.at = at + need
    this.count++
    return true
  }

  /** The frame of what was added (FRAME_HEAD zeros first, left for the stream to fill in). */
  finish (): Uint8Array {
    if (this.buf === undefined) return encodeFollowValues([], [], this.label, this.alloc)
    let labelBytes = 0
    const ids = new Map<string, Uint8Array>()
    for (const [id, name] of this.names.names) { const b = utf8.encode(id); ids.set(id, b); labelBytes += 4 + b.length + name.length }
    const head = FRAME_HEAD + 6 + labelBytes
    let out = this.buf
    let start = BUILD_RESERVE - head
    if (start < 0) {
      // more labels than the reserve holds: the entries move once
      const moved = this.alloc(head + this.at - BUILD_RESERVE)
      moved.set(out.subarray(BUILD_RESERVE, this.at), head)
      out = moved
      start = 0
    }
    out.fill(0, start, start + FRAME_HEAD)
    let at = start + FRAME_HEAD
    out.writeUInt32BE(this.count, at); at += 4
    out.writeUInt16BE(this.names.names.size, at); at += 2
    for (const [id, name] of this.names.names) {
      const idb = ids.get(id) as Uint8Array
      out.writeUInt16BE(idb.length, at); out.set(idb, at + 2); at += 2 + idb.length
      out.writeUInt16BE(name.length, at); out.set(name, at + 2); at += 2 + name.length
    }
    return out === this.buf ? out.subarray(start, this.at) : out
  }

  /** A buffer with room for `need` more bytes: at first as many entries as the page may hold of this one's size, later twice as large. */
  private grow (need: number): void {
    const old = this.buf
    const want = old === undefined
      ? BUILD_RESERVE + Math.min(this.entries * need, this.maxBytes + this.entries * (20 - VALUE_HEADER)) + need
      : Math.max(2 * old.byteLength, this.at + need)
    const buf = this.alloc(want)
    if (old !== undefined) buf.set(old.subarray(BUILD_RESERVE, this.at), BUILD_RESERVE)
    this.buf = buf
  }
}
