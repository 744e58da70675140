// The daemon's reader of a control connection: JSON request lines and binary
// request frames (request-frame.ts) mixed on one connection, split by
// line-frame-splitter.ts. Lines are decoded as UTF-8 only once whole. A line is bounded as
// the text reader before it bounded it, in UTF-16 code units (at most three
// UTF-8 bytes each), so every line accepted before is accepted now; a frame is
// bounded in bytes.
import { FRAME_HEAD } from './frame-head.js'
import { LineFrameSplitter } from './line-frame-splitter.js'
import { MAX_LINE_BYTES } from './protocol.js'
import type { RequestFrame } from './request-frame.js'

/** A request line or frame longer than the bound: the connection cannot be read further. */
export class RequestTooLongError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'RequestTooLongError'
  }
}

export class RequestReader extends LineFrameSplitter {
  /** UTF-16 code units of the held line, counted only once its bytes passed the bound (-1: not counted) */
  private units = -1

  /** `scratch`: frames joined from several chunks land in one reused buffer (onFrame's `transient`: read it at once or copy it) */
  constructor (onLine: (line: string) => void, onFrame: (frame: RequestFrame, transient: boolean) => void, max = MAX_LINE_BYTES, scratch = false) {
    super(onLine, (id, body, transient) => onFrame({ id, body }, transient), max, scratch)
  }

  protected frameTooLong (len: number): Error {
    return new RequestTooLongError(`control request frame of ${len} bytes (at most ${this.max})`)
  }

  protected lineGrew (chunk: Buffer): void {
    if (this.units >= 0) this.units += utf16Units(chunk)
  }

  protected released (): void { this.units = -1 }

  protected bound (): void {
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
