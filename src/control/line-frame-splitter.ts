// JSON lines and binary frames mixed on one control connection, split apart:
// the daemon reads requests with it (request-reader.ts) and the client replies
// (client.ts's ReplyReader). A frame starts with FRAME_MARK (0x00), which no
// JSON line starts with; its length is in its head (frame-head.ts). Received
// chunks are held until the line (its newline arrived) or frame they hold is
// complete, then joined once: a line or frame of megabytes costs linear time.
// What is too long, and the error it gets, is the reader's (bound, tooLong).
// A frame of at least DIRECT_BYTES gets its own buffer as soon as its head is
// read; its bytes are copied in as they come (push) or read into it by the
// socket itself (readInto / filled: the control client's `onread`), so a
// reply frame of megabytes is neither held as chunks nor joined.
// A reader made with `scratch` joins a smaller frame that arrived in several
// chunks into one buffer it reuses, and says so (onFrame's `transient`): the
// consumer reads it at once or copies it. Every 64 KiB send of a client
// otherwise cost one more 64 KiB buffer for V8's GC to count
// (docs/PERFORMANCE.md, session 18).
import { FRAME_HEAD, FRAME_MARK } from './frame-head.js'

/** frames (head included) at least this long are received straight into their own buffer */
export const DIRECT_BYTES = 256 * 1024

/** a scratch reader's joined-frame buffer is made at least this large (it never needs DIRECT_BYTES: such frames are received in place) */
const MIN_JOINED = 80 * 1024

export abstract class LineFrameSplitter {
  protected parts: Buffer[] = []
  protected held = 0
  /** bytes the held frame needs before it can be read (0: a line, waiting for its newline) */
  protected need = 0
  /** a large frame (head included) being received in place, and how many of its bytes are in */
  private direct: Buffer | undefined
  private got = 0

  /** the reused buffer of joined frames (scratch readers only) */
  private joined: Buffer | undefined

  constructor (
    private readonly onLine: (line: string) => void,
    /** `transient`: body is in the reader's scratch, valid until onFrame returns */
    private readonly onFrame: (id: number, body: Buffer, transient: boolean) => void,
    protected readonly max: number,
    private readonly scratch = false
  ) {}

  /** the error for a frame whose head names `len` bytes, past max */
  protected abstract frameTooLong (len: number): Error
  /** throws when what is held (a line or a frame) is past the bound */
  protected abstract bound (): void
  /** a chunk of a held line arrived without its newline */
  protected lineGrew (_chunk: Buffer): void {}
  /** what was held is joined and read */
  protected released (): void {}

  /**
   * Where the next bytes read may go: the rest of a large frame being
   * received (then report them with filled), or undefined (read anywhere
   * and push the chunk).
   */
  readInto (): Buffer | undefined {
    return this.direct?.subarray(this.got)
  }

  /** `n` bytes were read into the buffer readInto gave. */
  filled (n: number): void {
    const frame = this.direct
    if (frame === undefined) return
    this.got += n
    if (this.got < frame.length) return
    this.direct = undefined
    this.got = 0
    this.read(frame)
  }

  push (chunk: Buffer): void {
    const frame = this.direct
    if (frame !== undefined) {
      const n = Math.min(chunk.length, frame.length - this.got)
      chunk.copy(frame, this.got, 0, n)
      this.filled(n)
      if (n < chunk.length) this.push(chunk.subarray(n))
      return
    }
    this.parts.push(chunk)
    this.held += chunk.length
    if (this.held < this.need) return
    if (this.need === 0 && this.parts.length > 1 && chunk.indexOf(0x0a) < 0) {
      this.lineGrew(chunk)
      this.bound()
      return
    }
    // (need is FRAME_HEAD while only part of the head is held: the length is not known yet)
    if (this.scratch && this.need > FRAME_HEAD && this.parts.length > 1) { this.joinFrame(chunk); return }
    const buf = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.held)
    this.parts = []
    this.held = 0
    this.need = 0
    this.released()
    const at = this.read(buf)
    if (at < buf.length) {
      const rest = buf.subarray(at)
      this.parts = [rest]
      this.held = rest.length
      this.need = rest[0] !== FRAME_MARK ? 0 : rest.length < FRAME_HEAD ? FRAME_HEAD : FRAME_HEAD + rest.readUInt32BE(5)
      this.bound()
      if (this.need >= DIRECT_BYTES && this.need <= this.max + FRAME_HEAD) this.receiveDirect(rest)
    }
  }

  /**
   * The held frame is complete with `last`, the chunk just pushed: its bytes
   * go into the scratch buffer, the consumer reads them there, and what
   * follows the frame in `last` is read on (a view of it, not of the scratch).
   */
  private joinFrame (last: Buffer): void {
    const need = this.need
    const after = this.held - need
    if (this.joined === undefined || this.joined.length < need) this.joined = Buffer.allocUnsafeSlow(Math.max(need, MIN_JOINED))
    const frame = this.joined
    let at = 0
    for (const p of this.parts) at += p.copy(frame, at, 0, Math.min(p.length, need - at))
    this.parts = []
    this.held = 0
    this.need = 0
    this.released()
    this.onFrame(frame.readUInt32BE(1), frame.subarray(FRAME_HEAD, need), true)
    if (after > 0) this.push(last.subarray(last.length - after))
  }

  /** The held start of a large frame moves into the frame's own buffer; the rest is received there. */
  private receiveDirect (start: Buffer): void {
    const frame = Buffer.allocUnsafe(this.need)
    start.copy(frame, 0)
    this.parts = []
    this.held = 0
    this.need = 0
    this.released()
    this.direct = frame
    this.got = start.length
  }

  /** Read whole lines and frames from the start of buf; returns where the first incomplete one starts. */
  private read (buf: Buffer): number {
    let at = 0
    while (at < buf.length) {
      if (buf[at] === FRAME_MARK) {
        if (buf.length - at < FRAME_HEAD) return at
        const len = buf.readUInt32BE(at + 5)
        if (len > this.max) throw this.frameTooLong(len)
        if (buf.length - at - FRAME_HEAD < len) return at
        this.onFrame(buf.readUInt32BE(at + 1), buf.subarray(at + FRAME_HEAD, at + FRAME_HEAD + len), false)
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
}
