// The daemon's reader of a control connection: JSON request lines and binary
// request frames (request-frame.ts) mixed on one connection. A frame starts
// with FRAME_MARK (0x00), which no JSON line starts with. Received chunks are
// held until the line (its newline arrived) or frame (its length is in its
// head) they hold is complete, then joined once: a request of megabytes costs
// linear time. Lines are decoded as UTF-8 only once whole. A line is bounded as
// the text reader before it bounded it, in UTF-16 code units (at most three
// UTF-8 bytes each), so every line accepted before is accepted now; a frame is
// bounded in bytes.
import { FRAME_HEAD, FRAME_MARK } from './frame-head.js'
import { MAX_LINE_BYTES } from './protocol.js'
import type { RequestFrame } from './request-frame.js'

/** A request line or frame longer than the bound: the connection cannot be read further. */
export class RequestTooLongError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'RequestTooLongError'
  }
}

export class RequestReader {
  private parts: Buffer[] = []
  private held = 0
  /** bytes the held frame needs before it can be read (0: a line, waiting for its newline) */
  private need = 0
  /** UTF-16 code units of the held line, counted only once its bytes passed the bound (-1: not counted) */
  private units = -1

  constructor (
    private readonly onLine: (line: string) => void,
    private readonly onFrame: (frame: RequestFrame) => void,
    private readonly max = MAX_LINE_BYTES
  ) {}

  push (chunk: Buffer): void {
    this.parts.push(chunk)
    this.held += chunk.length
    if (this.held < this.need) return
    if (this.need === 0 && this.parts.length > 1 && chunk.indexOf(0x0a) < 0) {
      if (this.units >= 0) this.units += utf16Units(chunk)
      this.bound()
      return
    }
    const buf = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.held)
    this.parts = []
    this.held = 0
    this.need = 0
    this.units = -1
    const at = this.read(buf)
    if (at < buf.length) {
      const rest = buf.subarray(at)
      this.parts = [rest]
      this.held = rest.length
      this.need = rest[0] !== FRAME_MARK ? 0 : rest.length < FRAME_HEAD ? FRAME_HEAD : FRAME_HEAD + rest.readUInt32BE(5)
      this.bound()
    }
  }

  /** Read whole lines and frames from the start of buf; returns where the first incomplete one starts. */
  private read (buf: Buffer): number {
    let at = 0
    while (at < buf.length) {
      if (buf[at] === FRAME_MARK) {
        if (buf.length - at < FRAME_HEAD) return at
        const len = buf.readUInt32BE(at + 5)
        if (len > this.max) throw new RequestTooLongError(`control request frame of ${len} bytes (at most ${this.max})`)
        if (buf.length - at - FRAME_HEAD < len) return at
        this.onFrame({ id: buf.readUInt32BE(at + 1), body: buf.subarray(at + FRAME_HEAD, at + FRAME_HEAD + len) })
        at += FRAME_HEAD + len
        continue
      }
      const nl = buf.indexOf(0x0a, at)
      if (nl < 0) return at
      const line = buf.toString('utf8', at, nl)
      if (line.trim() !== '') this.onLine(line)
      at = nl + 1
    }
    return at
  }

  private bound (): void {
    if (this.need > 0) {
      if (this.held > this.max + FRAME_HEAD) throw new RequestTooLongError(`control request frame longer than ${this.max} bytes`)
      return
    }
    // a line of no more bytes than the bound has no more code units either
    if (this.held <= this.max) return
    if (this.units < 0) this.units = this.parts.reduce((n, p) => n + utf16Units(p), 0)
    if (this.units > this.max) throw new RequestTooLongError(`control line longer than ${this.max} bytes`)
  }
}

/** How many UTF-16 code units the UTF-8 bytes decode to: one per lead byte, two for a four-byte sequence. */
function utf16Units (bytes: Buffer): number {
  let n = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if ((b & 0xc0) !== 0x80) n += b >= 0xf0 ? 2 : 1
  }
  return n
}
