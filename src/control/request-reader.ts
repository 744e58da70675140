// The daemon's reader of a control connection: JSON request lines and binary
// request frames (request-frame.ts) mixed on one connection. A frame starts
// with FRAME_MARK (0x00), which no JSON line starts with. Received chunks are
// held until the line (its newline arrived) or frame (its length is in its
// head) they hold is complete, then joined once: a request of megabytes costs
// linear time. Lines are decoded as UTF-8 only once whole.
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

  constructor (
    private readonly onLine: (line: string) => void,
    private readonly onFrame: (frame: RequestFrame) => void,
    private readonly max = MAX_LINE_BYTES
  ) {}

  push (chunk: Buffer): void {
    this.parts.push(chunk)
    this.held += chunk.length
    if (this.held < this.need) return
    if (this.need === 0 && this.parts.length > 1 && chunk.indexOf(0x0a) < 0) { this.bound(); return }
    const buf = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.held)
    this.parts = []
    this.held = 0
    this.need = 0
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
    const limit = this.need > 0 ? this.max + FRAME_HEAD : this.max
    if (this.held > limit) throw new RequestTooLongError(`control line longer than ${this.max} bytes`)
  }
}
