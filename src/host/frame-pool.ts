// The buffers of binary frames (one follower's, or the host's `inbox.read`
// replies), reused once the socket wrote them. A replay of 100,000 stored 1,104 B packets otherwise allocates ~110 MB
// of 1 MiB frames; each lives until the consumer read it, long enough to be
// promoted, and V8 counts that external memory against the old generation's
// limit: measured (bench/tools/replay-ab.ts, --trace-gc) 9 mark-compacts per
// 150,000 followed entries, 1 with the pool, and ~1.5-2 us less daemon CPU per
// entry (docs/PERFORMANCE.md, session 8: replay).
//
// A frame is taken back only once its write resolved, and only a frame of at
// least REUSE_MIN_BYTES: Node's Writable.write returns false for a chunk at
// least the socket's high-water mark (16 KiB in Node 20, 64 KiB in Node 22),
// so the control connection's write resolves only on 'drain' (or rejects on
// close), when every byte of the chunk was handed to the kernel. A smaller
// frame may still sit in the socket's queue when its write resolves: it is
// never reused.

/** frames at least this large are reused once written (far above any socket high-water mark) */
export const REUSE_MIN_BYTES = 256 * 1024
/** a new pooled buffer holds at least this much, and a quarter more than asked (frames of a stream vary a little) */
const POOLED_BYTES = 2 * 1024 * 1024

export interface FramePoolOptions {
  /** free buffers kept (a follower has at most two frames out: one draining, one waiting for it) */
  max: number
  /** let the free buffers go after this long without a take (ms; 0: only clear() does) */
  releaseAfterMs: number
}

export class FramePool {
  private readonly free: Buffer[] = []
  /** the buffers this pool made: only they come back (a frame may be a view into one at any offset) */
  private readonly own = new WeakSet<ArrayBufferLike>()
  private timer: NodeJS.Timeout | undefined

  constructor (private readonly opts: FramePoolOptions = { max: 3, releaseAfterMs: 0 }) {}

  /** A buffer of exactly `size` bytes: from a free pooled buffer large enough, else new. */
  readonly take = (size: number): Buffer => {
    if (size < REUSE_MIN_BYTES) return Buffer.allocUnsafe(size)
    const i = this.free.findIndex((b) => b.byteLength >= size)
    const whole = i >= 0 ? this.free.splice(i, 1)[0] : this.made(Buffer.allocUnsafe(Math.max(POOLED_BYTES, size + (size >>> 2))))
    return whole.subarray(0, size)
  }

  /** `frame` (from take) may be reused once `written` resolved (never if it rejects, or if it is small). */
  giveAfter (frame: Uint8Array, written: Promise<void>): void {
    // only the pool's own buffers, for frames large enough
    if (frame.byteLength < REUSE_MIN_BYTES || !this.own.has(frame.buffer)) return
    written.then(() => {
      if (this.free.length < this.opts.max) this.free.push(Buffer.from(frame.buffer, 0, frame.buffer.byteLength))
      this.releaseLater()
    }, () => {})
  }

  private made (b: Buffer): Buffer {
    this.own.add(b.buffer)
    return b
  }

  /** Let the buffers go (a follower caught up: live pages are small). */
  clear (): void {
    this.free.length = 0
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private releaseLater (): void {
    if (this.opts.releaseAfterMs <= 0) return
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.free.length = 0; this.timer = undefined }, this.opts.releaseAfterMs)
    this.timer.unref()
  }
}
