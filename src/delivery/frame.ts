import { MalformedFrameError } from '../util/errors.js'
import { Uint8ArrayList } from 'uint8arraylist'

export const PACKET_PROTOCOL = '/amesh/packet/1.0.0'
/** Largest frame accepted on the packet protocol. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024
/** Most packets in one frame. */
export const MAX_PACKETS_PER_FRAME = 1024
/** Largest batch number (u32 on the wire); a link wraps to 1 past it. */
export const MAX_BATCH = 0xffff_ffff

/**
 * Per-packet answer, in the order of the packets of the frame it answers:
 * accepted with the inbox seq, or rejected with a code (r: retry later).
 */
export type AckResult =
  | { s: number }
  | { c: string, m: string, r?: boolean }

export type Frame =
  | { t: 'p', b: number, p: Uint8Array[], v?: Uint8Array[] }
  | { t: 'a', b: number, r: AckResult[] }
  | { t: 'e', c: string, m: string }

/*
 * Binary layout (all integers big-endian):
 *   packets  'p' batch:u32 count:u16 { len:u32 bytes }×count        count 1..1024
 *   acks     'a' batch:u32 count:u16 { result }×count               count 0..1024
 *            result = 0x00 seq:u64 (≤ 2^53-1)                       accepted
 *                   | 0x01|0x02 code:str8 reason:str16               rejected (0x02: retry later)
 *   error    'e' code:str8 reason:str16
 *   str8 = len:u8 utf8, str16 = len:u16 utf8
 * A frame is exactly one length-prefixed message: bytes past the last field
 * are malformed, as is any count, length or field that runs past the end.
 */
const T_PACKETS = 0x70 // 'p'
const T_ACKS = 0x61 // 'a'
const T_ERROR = 0x65 // 'e'
const R_ACCEPTED = 0
const R_REJECTED = 1
const R_RETRY = 2
const HEAD = 7
/** code and reason are cut to these many UTF-16 units on encode (fits u8 / u16 bytes) */
const CODE_CHARS = 64
const REASON_CHARS = 16_000

const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder('utf-8', { fatal: true })

function bad (msg: string): never {
  throw new MalformedFrameError(`malformed frame: ${msg}`)
}

/** A bounds-checked cursor over one frame. */
class Reader {
  private readonly view: DataView
  pos = 0
  constructor (readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  private need (n: number, what: string): void {
    if (this.pos + n > this.bytes.byteLength) bad(`${what} runs past the end of the frame`)
  }

  u8 (what: string): number { this.need(1, what); return this.bytes[this.pos++] }
  u16 (what: string): number { this.need(2, what); const v = this.view.getUint16(this.pos); this.pos += 2; return v }
  u32 (what: string): number { this.need(4, what); const v = this.view.getUint32(this.pos); this.pos += 4; return v }

  /** `n` bytes as a view of the frame (no copy). */
  take (n: number, what: string): Uint8Array {
    this.need(n, what)
    const out = this.bytes.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  str (len: number, what: string): string {
    const raw = this.take(len, what)
    try {
      return fromUtf8.decode(raw)
    } catch {
      return bad(`${what} is not UTF-8`)
    }
  }

  end (): void {
    if (this.pos !== this.bytes.byteLength) bad(`${this.bytes.byteLength - this.pos} bytes after the last field`)
  }
}

function packetsFrame (r: Reader): Frame {
  const b = r.u32('batch number')
  const n = r.u16('packet count')
  if (n === 0 || n > MAX_PACKETS_PER_FRAME) bad(`a packet frame carries 1..${MAX_PACKETS_PER_FRAME} packets, not ${n}`)
  const p = new Array<Uint8Array>(n)
  for (let k = 0; k < n; k++) p[k] = r.take(r.u32('packet length'), `packet ${k}`)
  r.end()
  return { t: 'p', b, p }
}

function ackResult (r: Reader, k: number): AckResult {
  const kind = r.u8(`result ${k}`)
  if (kind === R_ACCEPTED) {
    const hi = r.u32(`seq of result ${k}`)
    const lo = r.u32(`seq of result ${k}`)
    if (hi > 0x1f_ffff) bad(`seq of result ${k} exceeds 2^53-1`)
    return { s: hi * 0x1_0000_0000 + lo }
  }
  if (kind !== R_REJECTED && kind !== R_RETRY) bad(`result ${k} has unknown kind ${kind}`)
  const c = r.str(r.u8(`code of result ${k}`), `code of result ${k}`)
  const m = r.str(r.u16(`reason of result ${k}`), `reason of result ${k}`)
  if (c === '') bad(`result ${k} has an empty code`)
  return kind === R_RETRY ? { c, m, r: true } : { c, m }
}

function ackFrame (r: Reader): Frame {
  const b = r.u32('batch number')
  const n = r.u16('result count')
  if (n > MAX_PACKETS_PER_FRAME) bad(`an ack frame carries at most ${MAX_PACKETS_PER_FRAME} results, not ${n}`)
  const results = new Array<AckResult>(n)
  for (let k = 0; k < n; k++) results[k] = ackResult(r, k)
  r.end()
  return { t: 'a', b, r: results }
}

function errorFrame (r: Reader): Frame {
  const c = r.str(r.u8('error code'), 'error code')
  const m = r.str(r.u16('error reason'), 'error reason')
  r.end()
  if (c === '') bad('error frame has an empty code')
  return { t: 'e', c, m }
}

/** Decode one frame; packets are views of `bytes` (not copies). */
export function decodeFrame (bytes: Uint8Array): Frame {
  if (bytes.byteLength > MAX_FRAME_BYTES) bad(`frame of ${bytes.byteLength} bytes exceeds ${MAX_FRAME_BYTES}`)
  const r = new Reader(bytes)
  const t = r.u8('frame type')
  switch (t) {
    case T_PACKETS: return packetsFrame(r)
    case T_ACKS: return ackFrame(r)
    case T_ERROR: return errorFrame(r)
    default: return bad(`unknown frame type 0x${t.toString(16).padStart(2, '0')}`)
  }
}

/** decodeFrameSpaced copies packets one by one only for frames whose packets average this many bytes or more */
export const SPACED_MIN_AVERAGE = 4096

/**
 * decodeFrame of a frame given as its chunks, with each packet of a packet
 * frame copied once, straight from the chunks, into a buffer of its own with
 * `head` bytes free before it: `v[k]` is that buffer and `p[k]` its view past
 * the head (the receiver stores `v[k]` as the inbox value, whose header it
 * fills in). Instead of joining a large frame's chunks into one copy and then
 * copying every packet again into its inbox value, each packet is copied once.
 * Any other frame, a frame of small packets (under SPACED_MIN_AVERAGE bytes
 * each on average: no `v`, the receiver copies each into its value as
 * before), and any frame the reference would refuse, goes through
 * decodeFrame itself: the same frames, the same errors
 * (test/delivery/frame-spaced.test.ts checks both against decodeFrame).
 */
export function decodeFrameSpaced (list: Uint8ArrayList, head: number): Frame {
  const size = list.byteLength
  if (size > MAX_FRAME_BYTES || size < HEAD || list.get(0) !== T_PACKETS) return decodeFrame(list.subarray())
  const b = list.getUint32(1)
  const n = list.getUint16(5)
  if (n === 0 || n > MAX_PACKETS_PER_FRAME) return decodeFrame(list.subarray())
  // small packets: joining the frame once and copying each packet into a pooled value is as cheap (T2)
  if (size < n * SPACED_MIN_AVERAGE) return decodeFrame(list.subarray())
  // the lengths first: a frame the reference refuses never gets here
  const starts = new Array<number>(n)
  const lens = new Array<number>(n)
  let pos = HEAD
  for (let k = 0; k < n; k++) {
    if (pos + 4 > size) return decodeFrame(list.subarray())
    const len = list.getUint32(pos)
    pos += 4
    if (len > size - pos) return decodeFrame(list.subarray())
    starts[k] = pos
    lens[k] = len
    pos += len
  }
  if (pos !== size) return decodeFrame(list.subarray())
  const p = new Array<Uint8Array>(n)
  const v = new Array<Uint8Array>(n)
  for (let k = 0; k < n; k++) {
    // every byte past the head is written here; the head is the caller's to fill
    const value = Buffer.allocUnsafe(head + lens[k])
    let at = head
    for (const piece of list.sublist(starts[k], starts[k] + lens[k])) { value.set(piece, at); at += piece.byteLength }
    v[k] = value
    p[k] = value.subarray(head)
  }
  return { t: 'p', b, p, v }
}

function checkBatch (b: number): void {
  if (!Number.isInteger(b) || b < 0 || b > MAX_BATCH) throw new RangeError(`batch number ${b} is not a u32`)
}

/** Bytes of the unsigned varint (LEB128) that prefixes a frame of `size` bytes on the stream. */
function varintLength (size: number): number {
  let n = 1
  while (size >= 0x80) { size = Math.floor(size / 0x80); n++ }
  return n
}

/** Write `size` as an unsigned varint at the start of `out`. */
function putVarint (out: Uint8Array, size: number): void {
  let k = 0
  while (size >= 0x80) { out[k++] = (size % 0x80) | 0x80; size = Math.floor(size / 0x80) }
  out[k] = size
}

/**
 * A frame of `size` bytes with its head (type, batch, count) written; the
 * caller writes every byte of `out` after HEAD. `whole` is what is sent: the
 * frame alone, or (`prefixed`) its length prefix and the frame in one buffer.
 */
function frameWithHead (size: number, type: number, b: number, count: number, prefixed: boolean): { whole: Uint8Array, out: Uint8Array, view: DataView } {
  const pre = prefixed ? varintLength(size) : 0
  const whole = Buffer.allocUnsafe(pre + size)
  if (prefixed) putVarint(whole, size)
  const out = pre === 0 ? whole : whole.subarray(pre)
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  out[0] = type
  view.setUint32(1, b)
  view.setUint16(5, count)
  return { whole, out, view }
}

/**
 * One packet frame: a single allocation, each packet copied in once.
 * `prefixed`: with its stream length prefix (the varint it-length-prefixed
 * writes) in the same buffer, so the frame leaves as one yamux frame, one
 * Noise message and one TCP write instead of two of each (link.ts).
 */
export function encodePacketsFrame (b: number, packets: readonly Uint8Array[], prefixed = false): Uint8Array {
  checkBatch(b)
  if (packets.length === 0 || packets.length > MAX_PACKETS_PER_FRAME) throw new RangeError(`a packet frame carries 1..${MAX_PACKETS_PER_FRAME} packets`)
  let size = HEAD
  for (const p of packets) size += 4 + p.byteLength
  const { whole, out, view } = frameWithHead(size, T_PACKETS, b, packets.length, prefixed)
  let pos = HEAD
  for (const p of packets) {
    view.setUint32(pos, p.byteLength)
    out.set(p, pos + 4)
    pos += 4 + p.byteLength
  }
  return whole
}

/** packets this large or larger leave encodePacketsFramePieces as views of their own bytes; smaller ones are copied */
export const VIEW_MIN_BYTES = 4096

/**
 * encodePacketsFrame(b, packets, true) as pieces: their bytes one after the
 * other are exactly that buffer's. Each packet of at least `viewMin` bytes is
 * its own piece, the caller's bytes themselves (not copied; they must not
 * change until the pieces are written); the length prefix, the head, every
 * length and every smaller packet are written, in order, into one buffer cut
 * into the pieces between. A frame of 64 KiB packets is then not copied into
 * a 1 MiB buffer of its own before Noise reads it (that copy, and the
 * external memory it reports to V8, is per packet). With no packet that
 * large it is the one buffer of encodePacketsFrame.
 * test/delivery/frame-pieces.test.ts checks the bytes against encodePacketsFrame.
 */
export function encodePacketsFramePieces (b: number, packets: readonly Uint8Array[], viewMin = VIEW_MIN_BYTES): Uint8Array[] {
  checkBatch(b)
  const min = Math.max(1, viewMin) // no empty piece
  if (packets.length === 0 || packets.length > MAX_PACKETS_PER_FRAME) throw new RangeError(`a packet frame carries 1..${MAX_PACKETS_PER_FRAME} packets`)
  let size = HEAD
  let copied = HEAD
  for (const p of packets) {
    size += 4 + p.byteLength
    copied += p.byteLength >= min ? 4 : 4 + p.byteLength
  }
  if (copied === size) return [encodePacketsFrame(b, packets, true)]
  const pre = varintLength(size)
  const own = Buffer.allocUnsafe(pre + copied)
  putVarint(own, size)
  own[pre] = T_PACKETS
  own.writeUInt32BE(b, pre + 1)
  own.writeUInt16BE(packets.length, pre + 5)
  const pieces: Uint8Array[] = []
  let start = 0
  let at = pre + HEAD
  for (const p of packets) {
    own.writeUInt32BE(p.byteLength, at)
    at += 4
    if (p.byteLength >= min) {
      pieces.push(own.subarray(start, at), p)
      start = at
    } else {
      own.set(p, at)
      at += p.byteLength
    }
  }
  if (at > start) pieces.push(own.subarray(start, at))
  return pieces
}

/** What a link pushes to its stream: one buffer, or the pieces of encodePacketsFramePieces as one list. */
export type OutgoingFrame = Uint8Array | Uint8ArrayList

/** A packet frame with its length prefix, ready to push: its large packets not copied (encodePacketsFramePieces). */
export function outgoingPacketsFrame (b: number, packets: readonly Uint8Array[]): OutgoingFrame {
  const pieces = encodePacketsFramePieces(b, packets)
  return pieces.length === 1 ? pieces[0] : new Uint8ArrayList(...pieces)
}

interface Text { code: Uint8Array, reason: Uint8Array }

function texts (c: string, m: string): Text {
  return { code: utf8.encode(c.slice(0, CODE_CHARS)), reason: utf8.encode(m.slice(0, REASON_CHARS)) }
}

function putText (out: Uint8Array, view: DataView, pos: number, t: Text): number {
  out[pos] = t.code.byteLength
  out.set(t.code, pos + 1)
  pos += 1 + t.code.byteLength
  view.setUint16(pos, t.reason.byteLength)
  out.set(t.reason, pos + 2)
  return pos + 2 + t.reason.byteLength
}

/** One ack frame; accepted results cost 9 bytes each. `prefixed`: with its stream length prefix, as encodePacketsFrame. */
export function encodeAckFrame (b: number, results: readonly AckResult[], prefixed = false): Uint8Array {
  checkBatch(b)
  if (results.length > MAX_PACKETS_PER_FRAME) throw new RangeError(`an ack frame carries at most ${MAX_PACKETS_PER_FRAME} results`)
  const rejected: Array<Text | undefined> = new Array(results.length)
  let size = HEAD
  for (let k = 0; k < results.length; k++) {
    const r = results[k]
    if ('s' in r) {
      if (!Number.isSafeInteger(r.s) || r.s < 0) throw new RangeError(`seq ${r.s} is not a non-negative safe integer`)
      size += 9
    } else {
      const t = texts(r.c, r.m)
      rejected[k] = t
      size += 4 + t.code.byteLength + t.reason.byteLength
    }
  }
  const { whole, out, view } = frameWithHead(size, T_ACKS, b, results.length, prefixed)
  let pos = HEAD
  for (let k = 0; k < results.length; k++) {
    const r = results[k]
    if ('s' in r) {
      out[pos] = R_ACCEPTED
      view.setUint32(pos + 1, Math.floor(r.s / 0x1_0000_0000))
      view.setUint32(pos + 5, r.s >>> 0)
      pos += 9
    } else {
      out[pos] = r.r === true ? R_RETRY : R_REJECTED
      pos = putText(out, view, pos + 1, rejected[k] as Text)
    }
  }
  return whole
}

export function encodeErrorFrame (c: string, m: string): Uint8Array {
  const t = texts(c, m)
  const out = new Uint8Array(1 + 3 + t.code.byteLength + t.reason.byteLength)
  out[0] = T_ERROR
  putText(out, new DataView(out.buffer), 1, t)
  return out
}

/** A frame with its stream length prefix in front, in one buffer (a copy; for the rare frames not encoded prefixed). */
export function lengthPrefixed (frame: Uint8Array): Uint8Array {
  const pre = varintLength(frame.byteLength)
  const whole = Buffer.allocUnsafe(pre + frame.byteLength)
  putVarint(whole, frame.byteLength)
  whole.set(frame, pre)
  return whole
}

export function encodeFrame (frame: Frame): Uint8Array {
  switch (frame.t) {
    case 'p': return encodePacketsFrame(frame.b, frame.p)
    case 'a': return encodeAckFrame(frame.b, frame.r)
    case 'e': return encodeErrorFrame(frame.c, frame.m)
  }
}
