import { Level } from 'level'
import { StoreLockedError } from '../util/errors.js'
import type { StoreGuard } from './store-guard.js'
import { mark } from '../util/trace.js'
import type { ValueLog } from './value-log.js'
import type { WriteOp } from './write-op.js'

export type Durability = 'always' | 'batch' | 'none'
export const DURABILITY_MODES: readonly Durability[] = ['always', 'batch', 'none']

export type { DelOp, PutOp, WriteOp } from './write-op.js'

export type RawDb = Level<string, Uint8Array>

/** What the Committer writes to: a LevelDB, or a stub in tests. */
export interface BatchTarget {
  batch: (ops: WriteOp[], options: { sync: boolean }) => Promise<void>
}

/** Most operations in one group-committed batch; more wait for the next one. */
export const MAX_BATCH_OPS = 16_384

interface Waiter { ops: WriteOp[], resolve: () => void, reject: (err: unknown) => void }

export interface CommitStats { batches: number, synced: number, ops: number }

/**
 * Group commit. Every caller's promise resolves only once the batch holding
 * its operations is written — and, in `batch` and `always` mode, synced to
 * disk (fsync). A caller's operations are never split across batches, and
 * batches are written strictly in call order.
 *
 * - `always`: one synced batch per write() call.
 * - `batch`: all writes queued while a batch is being written go into the next
 *   synced batch (it starts on the turn after the previous one is on disk; an
 *   idle committer starts once the microtasks queued so far have run), up to
 *   MAX_BATCH_OPS per batch.
 * - `none`: grouped like `batch`, but not synced (the OS decides when).
 *
 * With a StoreGuard, a failed batch is fatal to acknowledging: it and every
 * queued and later write are refused with the guard's (retryable) error until
 * the guard has reopened the store, so no write that LevelDB could drop with
 * a damaged log tail is ever acknowledged (store-guard.ts).
 */
export class Committer {
  private queue: Waiter[] = []
  private queuedOps = 0
  private writing = false
  private scheduled = false
  readonly stats: CommitStats = { batches: 0, synced: 0, ops: 0 }

  /**
   * `turnStart`: an idle committer's batch starts on the next turn too (the
   * reference of the early start, for equivalence tests)
   */
  constructor (private readonly db: BatchTarget, readonly mode: Durability, private readonly guard?: StoreGuard, private readonly turnStart?: boolean, private readonly values?: ValueLog) {}

  write (ops: WriteOp[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (ops.length > 0 && this.guard !== undefined && this.guard.state !== 'ok') {
        try { this.guard.admit() } catch (err) { reject(err); return }
      }
      this.queue.push({ ops, resolve, reject })
      this.queuedOps += ops.length
      this.schedule()
    })
  }

  /**
   * Start the next batch: on the next turn after a batch (what queued while it
   * was written goes in it), but once the microtasks queued so far have run
   * when the committer was idle, so a lone write is on the pool thread before
   * the rest of this turn's work (a socket write, a yamux window update), which
   * then overlaps its fsync instead of going before it.
   */
  private schedule (idle = true): void {
    if (this.writing || this.scheduled) return
    mark('commit.queued')
    this.scheduled = true
    if (idle && this.turnStart !== true) queueMicrotask(this.scheduledFlush)
    else setImmediate(this.scheduledFlush)
  }

  private readonly scheduledFlush = (): void => { this.scheduled = false; void this.flush() }

  /** The waiters of the next batch: one write() call in `always` mode, else as many as fit. */
  private take (): Waiter[] {
    if (this.mode === 'always') return this.queue.splice(0, 1)
    let n = 0
    let ops = 0
    while (n < this.queue.length && (n === 0 || ops + this.queue[n].ops.length <= MAX_BATCH_OPS)) {
      ops += this.queue[n].ops.length
      n++
    }
    return this.queue.splice(0, n)
  }

  private async flush (): Promise<void> {
    if (this.writing || this.queue.length === 0) return
    this.writing = true
    const waiters = this.take()
    const ops = waiters.length === 1 ? waiters[0].ops : concatOps(waiters)
    this.queuedOps -= ops.length
    const sync = this.mode !== 'none'
    try {
      if (ops.length > 0) {
        const epoch = this.admit(ops)
        mark('commit.start')
        await this.commit(ops, sync)
        this.confirm(epoch)
        mark('commit.done')
        this.stats.batches++
        this.stats.ops += ops.length
        if (sync) this.stats.synced++
      }
      for (const w of waiters) w.resolve()
    } catch (err) {
      for (const w of waiters) w.reject(err)
      // a refusal or fault refuses what is queued too: none of it may land after a damaged record, and appends queued in order fail together
      if (this.guard !== undefined && this.guard.state !== 'ok') this.refuseQueued(err)
    } finally {
      this.writing = false
      if (this.queue.length > 0) this.schedule(false)
    }
  }

  /**
   * Write a batch: its large values first into the value log (synced with it,
   * before LevelDB holds a pointer to them), then the batch. A failure of
   * either is a store fault.
   */
  private async commit (ops: WriteOp[], sync: boolean): Promise<void> {
    const fault = (err: unknown): never => { throw this.guard?.fault(err) ?? err }
    if (this.values === undefined || !this.values.wants(ops)) {
      await this.db.batch(ops, { sync }).catch(fault)
      return
    }
    const { ops: stored, done } = await this.values.append(ops).catch(fault)
    try {
      await this.db.batch(stored, { sync }).catch(fault)
    } finally {
      done()
    }
  }

  /** Ask the guard whether a batch may be written; returns the fault epoch it is written in. */
  private admit (ops: WriteOp[]): number {
    if (this.guard === undefined) return 0
    this.guard.admit(opBytes(ops))
    return this.guard.epoch
  }

  /** A write that was in LevelDB's queue when another write failed is not acknowledged: it may follow the damage. */
  private confirm (epoch: number): void {
    if (this.guard !== undefined && this.guard.epoch !== epoch) this.guard.admit()
  }

  private refuseQueued (err: unknown): void {
    const queued = this.queue.splice(0)
    this.queuedOps = 0
    for (const w of queued) if (w.ops.length > 0) w.reject(err); else w.resolve()
  }

  /**
   * Write now, beside the queue, never synced: for operations that no caller
   * waits on for a guarantee and whose loss in an OS crash is harmless (the
   * removal of outbox entries the receiver already holds: if it is lost, the
   * entries are resent and dropped there as duplicates). They are ordered
   * after everything already written; a later synced batch also makes them
   * durable (one log).
   */
  async writeUnsynced (ops: WriteOp[]): Promise<void> {
    if (ops.length === 0) return
    const epoch = this.admit(ops)
    const write = this.db.batch(ops, { sync: false }).catch((err) => { throw this.guard?.fault(err) ?? err })
    this.unsynced.add(write)
    try {
      await write
      this.confirm(epoch)
      this.stats.batches++
      this.stats.ops += ops.length
    } finally {
      this.unsynced.delete(write)
    }
  }

  /** unsynced writes in flight (drain waits for them too) */
  private readonly unsynced = new Set<Promise<void>>()

  /** Operations queued and not yet written. */
  get backlog (): number { return this.queuedOps }

  /** Resolves when everything queued so far, and every unsynced write in flight, is written. */
  async drain (): Promise<void> {
    if (this.unsynced.size > 0) await Promise.allSettled([...this.unsynced])
    if (this.queue.length === 0 && !this.writing) return
    await this.write([])
  }
}

/** about the bytes a batch adds to the log */
function opBytes (ops: WriteOp[]): number {
  let n = 0
  for (const op of ops) n += op.key.length + (op.type === 'put' ? op.value.byteLength : 0) + 8
  return n
}

function concatOps (waiters: Waiter[]): WriteOp[] {
  const ops: WriteOp[] = []
  for (const w of waiters) for (const op of w.ops) ops.push(op)
  return ops
}

/** classic-level's own batch hooks (abstract-level's implementation hooks), not in its public types */
interface NativeBatch {
  _batch?: (ops: WriteOp[], options: { sync: boolean }) => Promise<void>
  _chainedBatch?: () => NativeChainedBatch
}

/** classic-level's chained batch: each `_put`/`_del` goes straight into the native WriteBatch */
interface NativeChainedBatch {
  _put: (key: string, value: Uint8Array) => void
  _del: (key: string) => void
  _write: (options: { sync: boolean }) => Promise<void>
  /** empties the native WriteBatch (its buffer keeps its capacity) */
  _clear: () => void
  close: () => Promise<void>
}

/**
 * Batches of more bytes than this go through `_batch`, whose native WriteBatch
 * is freed as soon as it is written; a pooled batch keeps its capacity, so the
 * pool holds at most BATCH_POOL_SIZE x this. 4 MiB, a control connection's
 * requests in progress (src/control/connection.ts): a group commit of large
 * sends reuses a buffer that already has the room instead of growing a fresh
 * one in `_batch` (its copies and page faults on the main thread). Measured
 * (t3-threads at steady state, 3 rounds alternated against 1 MiB): sender
 * 517 / 483 / 503 against 567 / 580 / 553 µs per 64 KiB packet, T3 94.0 /
 * 101.0 / 98.7 against 92.5 / 92.4 / 93.6 MiB/s (docs/PERFORMANCE.md, session 18).
 */
export const POOLED_BATCH_MAX_BYTES = 4 * 1024 * 1024
/** Chained batches kept for reuse: the group commit's and one unsynced write beside it. */
export const BATCH_POOL_SIZE = 2

/**
 * Write ops through native chained batches: one native call per op with its
 * key and value as arguments, where `_batch` reads `type`, `key` and `value`
 * off every op object through N-API (measured: 1.6-2.1 µs of main-thread
 * CPU per op chained, 2.8-3.2 µs through `_batch`; 512 ops of 700 B puts and
 * empty puts, unsynced). The same ops in the same order make the same
 * LevelDB WriteBatch (test/store/batch-target.test.ts compares the stores).
 *
 * classic-level frees a chained batch's native WriteBatch only when its JS
 * wrapper is garbage collected (its `_close` does nothing), so a batch per
 * write left hundreds of them, each holding a copy of its ops, in the main
 * malloc heap between major GCs: +33 MiB of it on a sender during a 20,000 x
 * 512 B burst (docs/PERFORMANCE.md, session 7). A few batches are kept and
 * cleared after each write instead (`_clear` keeps the buffer's capacity,
 * hence the byte bound); the pool is dropped when the store closes.
 */
class ChainedPool {
  private readonly free: NativeChainedBatch[] = []
  /** counts store closes: a batch made before one is not pooled again */
  private closes = 0

  constructor (private readonly make: () => NativeChainedBatch) {}

  async write (ops: WriteOp[], sync: boolean): Promise<void> {
    const b = this.free.pop() ?? this.make()
    const made = this.closes
    try {
      for (const op of ops) {
        if (op.type === 'put') b._put(op.key, op.value)
        else b._del(op.key)
      }
      await b._write({ sync })
    } finally {
      b._clear()
      if (made === this.closes && this.free.length < BATCH_POOL_SIZE) this.free.push(b)
      else await b.close()
    }
  }

  /** The store is closing: it closes every batch made on it; make new ones once it is open again. */
  drop (): void {
    this.closes++
    this.free.length = 0
  }
}

/**
 * A BatchTarget over a LevelDB. While the store is open, batches go straight
 * to classic-level's own hooks: the public `batch()` first clones every
 * operation, runs the key/value encoders (identities here: keys are utf8
 * strings and values Uint8Arrays, both native to classic-level) and the
 * hooks (none are used), which cost more CPU per operation than the native
 * write itself (measured: 13-15 µs of CPU per operation through `batch()`,
 * 4-6 µs through `_batch`, 600 B puts, unsynced). Batches of more than one
 * op and at most POOLED_BATCH_MAX_BYTES go through a reused chained batch
 * (ChainedPool), others through `_batch`. Otherwise (opening, closing,
 * closed) the public path gives its usual errors.
 */
export function batchTarget (db: RawDb): BatchTarget {
  const native = db as unknown as NativeBatch
  const array = native._batch
  const chained = native._chainedBatch
  const pool = chained === undefined ? undefined : new ChainedPool(() => chained.call(db))
  if (pool !== undefined) db.on('closing', () => { pool.drop() })
  return {
    batch: async (ops, options) => {
      if (db.status !== 'open' || array === undefined) await db.batch(ops, options as object)
      else if (pool !== undefined && ops.length > 1 && opBytes(ops) <= POOLED_BATCH_MAX_BYTES) await pool.write(ops, options.sync)
      else await array.call(db, ops, { sync: options.sync })
    }
  }
}

/** The reference path of batchTarget: classic-level's `_batch` with the op objects (equivalence tests). */
export function arrayBatchTarget (db: RawDb): BatchTarget {
  const array = (db as unknown as NativeBatch)._batch
  return { batch: async (ops, options) => { await (array === undefined ? db.batch(ops, options as object) : array.call(db, ops, { sync: options.sync })) } }
}

/**
 * LevelDB's table block size. Its default, 4 KiB, holds three or four stored
 * packets: every flush and compaction then writes, checksums and compresses a
 * block (one write system call each: classic-level's LevelDB 1.20 flushes
 * after every block) per few packets. 16 KiB blocks compress better and take
 * a quarter of those calls; measured (docs/PERFORMANCE.md, session 19): the
 * receiver's store path 11.0 → 9.7 µs per T2 packet, compactions writing
 * 17 → 13 MB, replay (T4) and memory (T6) unchanged. A point read now reads
 * up to 16 KiB, which no hot path does (ids and cursors are answered from
 * memory; replay iterates).
 */
export const BLOCK_BYTES = 16 * 1024

export async function openDb (path: string): Promise<RawDb> {
  const db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view', blockSize: BLOCK_BYTES })
  try {
    await db.open()
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause
    if (cause?.code === 'LEVEL_LOCKED') {
      throw new StoreLockedError(`the store ${path} is already in use by another amesh process`, { cause: err })
    }
    throw err
  }
  return db
}

/** Iterate keys with a prefix, in order, after an optional key. */
export async function * scan (db: RawDb, prefix: string, opts: { after?: string, limit?: number, reverse?: boolean } = {}): AsyncGenerator<[string, Uint8Array]> {
  const range = {
    gt: opts.after ?? prefix,
    lt: prefix + '\xff',
    limit: opts.limit ?? -1,
    reverse: opts.reverse ?? false
  }
  for await (const entry of db.iterator(range)) {
    yield entry as [string, Uint8Array]
  }
}

const enc = new TextEncoder()
const dec = new TextDecoder()

export function toJsonBytes (value: unknown): Uint8Array {
  return enc.encode(JSON.stringify(value))
}

export function fromJsonBytes<T> (bytes: Uint8Array): T {
  return JSON.parse(dec.decode(bytes)) as T
}
