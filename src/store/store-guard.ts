import { statfs } from 'node:fs/promises'
import { AmeshError, StoreFaultError, StoreFullError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'

export const MIB = 1024 * 1024
/** default low-space watermark (`store_min_free_bytes`): writes are refused below it */
export const DEFAULT_MIN_FREE_BYTES = 64 * MIB
/** free space the store's disk needs before a faulted store is reopened (LevelDB writes a table and a manifest on open) */
export const REOPEN_MIN_FREE_BYTES = 8 * MIB
export { EXIT_STORE_FAULT } from '../util/exit-codes.js'
/** how often free space is measured, and a faulted store tries to recover */
const POLL_INTERVAL = SECOND
/** reopen attempts with space available before the daemon gives up */
const REOPEN_ATTEMPTS = 5

/**
 * - ok: writes are taken
 * - low-space: free space is under the watermark; writes are refused, nothing failed
 * - faulted: a write failed; writes are refused until the store is reopened
 * - reopening: the store is being closed and opened again
 * - failed: reopening failed for good (the daemon exits)
 */
export type StoreState = 'ok' | 'low-space' | 'faulted' | 'reopening' | 'failed'

export interface StoreHealth {
  state: StoreState
  free_bytes?: number
  min_free_bytes: number
  /** why writes are refused, when they are */
  error?: { code: string, message: string }
  since?: number
  faults: number
  reopens: number
}

export interface GuardOptions {
  /** the store directory (its file system is measured) */
  path: string
  minFreeBytes: number
  /** close and open the store again (LevelDB drops a damaged log tail on open and starts a new log) */
  reopen: () => Promise<void>
  log: Logger
  /** reopening failed REOPEN_ATTEMPTS times with space available */
  onFatal: (err: AmeshError) => void
  /** measures free bytes (default: statfs of `path`) */
  measure?: (path: string) => Promise<number>
}

/** True when a LevelDB or file-system error says the disk is full. */
export function isNoSpace (err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const { code, message } = e as { code?: unknown, message?: unknown }
    if (code === 'ENOSPC' || code === 'EDQUOT') return true
    if (typeof message === 'string' && /no space left|ENOSPC|disk quota exceeded/i.test(message)) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}

async function freeBytes (path: string): Promise<number> {
  const s = await statfs(path)
  return s.bavail * s.bsize
}

/**
 * Storage faults are fatal to acknowledging, never to data. After a failed
 * write LevelDB may have left a partial record in its log; records appended
 * after it are dropped when the log is next read ("checksum mismatch"), so
 * they must never be acknowledged. The guard refuses every write from the
 * first failure on (StoreFullError on a full disk, else StoreFaultError, both
 * retryable), waits for space, and reopens the store, which ends the damaged
 * log; then writes are taken again. It also refuses writes while free space is
 * under the watermark, before the disk is full.
 */
export class StoreGuard {
  private current: StoreState = 'ok'
  private refusal?: AmeshError
  private since?: number
  private free?: number
  /** bytes handed to the store since `free` was measured */
  private written = 0
  private epochN = 0
  private attempts = 0
  private faults = 0
  private reopens = 0
  private timer?: NodeJS.Timeout
  private ticking = false

  constructor (private readonly opts: GuardOptions) {}

  get state (): StoreState { return this.current }
  /** bumped by every fault: a write that began before a fault and ended after it is not acknowledged */
  get epoch (): number { return this.epochN }

  async start (): Promise<void> {
    await this.measure()
    this.checkSpace()
    this.timer = setInterval(() => { void this.tick() }, POLL_INTERVAL)
    this.timer.unref()
  }

  stop (): void { clearInterval(this.timer) }

  /** Throws the refusal when the store may not take a write of about `bytes` now. */
  admit (bytes = 0): void {
    if (this.current !== 'ok') throw this.refusal as AmeshError
    if (this.opts.minFreeBytes > 0 && this.free !== undefined && this.free - this.written - bytes < this.opts.minFreeBytes) {
      this.enter('low-space', new StoreFullError(this.lowSpaceMessage(this.free - this.written)))
      throw this.refusal as AmeshError
    }
    this.written += bytes
  }

  /** A write failed: refuse everything from now on until the store is reopened. Returns the refusal to hand to the writer. */
  fault (err: unknown): AmeshError {
    if (this.current === 'faulted' || this.current === 'reopening' || this.current === 'failed') return this.refusal as AmeshError
    this.epochN++
    this.faults++
    const why = errorMessage(err)
    const refusal = isNoSpace(err)
      ? new StoreFullError(`the store's disk is full (${why}): writes are refused until space returns and the store is reopened; retry later`, { cause: err })
      : new StoreFaultError(`a store write failed (${why}): writes are refused until the store is reopened; retry later`, { cause: err })
    this.enter('faulted', refusal)
    setImmediate(() => { void this.tick() })
    return refusal
  }

  health (): StoreHealth {
    return {
      state: this.current,
      ...(this.free !== undefined ? { free_bytes: this.free } : {}),
      min_free_bytes: this.opts.minFreeBytes,
      ...(this.refusal !== undefined ? { error: { code: this.refusal.code, message: this.refusal.message } } : {}),
      ...(this.since !== undefined ? { since: this.since } : {}),
      faults: this.faults,
      reopens: this.reopens
    }
  }

  private enter (state: StoreState, refusal?: AmeshError): void {
    this.current = state
    this.refusal = refusal
    this.since = state === 'ok' ? undefined : Date.now()
    if (refusal !== undefined) this.opts.log(`store ${state}: ${refusal.message}`)
  }

  private lowSpaceMessage (free: number): string {
    return `the store's disk is nearly full (${free} bytes free, under store_min_free_bytes ${this.opts.minFreeBytes}): writes are refused until space returns; retry later`
  }

  private async measure (): Promise<void> {
    try {
      this.free = await (this.opts.measure ?? freeBytes)(this.opts.path)
      this.written = 0
    } catch (err) {
      this.opts.log(`store: cannot measure free space: ${errorMessage(err)}`)
    }
  }

  /** ok <-> low-space by the latest measure */
  private checkSpace (): void {
    if (this.free === undefined || this.opts.minFreeBytes === 0) return
    if (this.current === 'ok' && this.free < this.opts.minFreeBytes) this.enter('low-space', new StoreFullError(this.lowSpaceMessage(this.free)))
    else if (this.current === 'low-space' && this.free >= this.opts.minFreeBytes) {
      this.enter('ok')
      this.opts.log(`store ok: ${this.free} bytes free again; writes are accepted`)
    }
  }

  private async tick (): Promise<void> {
    if (this.ticking) return
    this.ticking = true
    try {
      await this.measure()
      if (this.current === 'faulted') await this.recover()
      else this.checkSpace()
    } finally {
      this.ticking = false
    }
  }

  /** Reopen a faulted store once there is room to; give up after REOPEN_ATTEMPTS failures with room. */
  private async recover (): Promise<void> {
    const need = Math.max(this.opts.minFreeBytes, REOPEN_MIN_FREE_BYTES)
    if (this.free !== undefined && this.free < need) return
    const refusal = this.refusal
    this.current = 'reopening'
    try {
      await this.opts.reopen()
      this.reopens++
      this.attempts = 0
      this.enter('ok')
      this.opts.log(`store reopened after a write failure (${this.free ?? '?'} bytes free): writes are accepted again`)
    } catch (err) {
      this.current = 'faulted'
      this.refusal = refusal
      if (isNoSpace(err)) { this.opts.log(`store: reopening needs more space: ${errorMessage(err)}`); return }
      this.attempts++
      this.opts.log(`store: reopening failed (${this.attempts} of ${REOPEN_ATTEMPTS}): ${errorMessage(err)}`)
      if (this.attempts >= REOPEN_ATTEMPTS) {
        this.current = 'failed'
        this.opts.onFatal(new StoreFaultError(`the store at ${this.opts.path} failed a write and cannot be reopened (${errorMessage(err)})`, { cause: err }))
      }
    }
  }
}
