import { Level } from 'level'
import { StoreLockedError } from '../util/errors.js'

export type Durability = 'always' | 'batch' | 'none'
export const DURABILITY_MODES: readonly Durability[] = ['always', 'batch', 'none']

export interface PutOp { type: 'put', key: string, value: Uint8Array }
export interface DelOp { type: 'del', key: string }
export type WriteOp = PutOp | DelOp

export type RawDb = Level<string, Uint8Array>

interface Waiter { resolve: () => void, reject: (err: unknown) => void }

/**
 * Group commit. `batch`: every write queued while a synced batch is in flight
 * goes into the next synced batch; callers resolve only once their batch is on
 * disk. `always`: one synced batch per write call. `none`: grouped, unsynced.
 */
export class Committer {
  private pending: WriteOp[] = []
  private waiters: Waiter[] = []
  private writing = false
  private scheduled = false

  constructor (private readonly db: RawDb, private readonly mode: Durability) {}

  write (ops: WriteOp[]): Promise<void> {
    if (this.mode === 'always') return this.writeNow(ops)
    return new Promise<void>((resolve, reject) => {
      this.pending.push(...ops)
      this.waiters.push({ resolve, reject })
      this.schedule()
    })
  }

  private chain: Promise<void> = Promise.resolve()

  private writeNow (ops: WriteOp[]): Promise<void> {
    const run = this.chain.then(async () => await this.db.batch(ops, { sync: true } as object))
    this.chain = run.catch(() => {})
    return run
  }

  private schedule (): void {
    if (this.writing || this.scheduled) return
    this.scheduled = true
    setImmediate(() => { this.scheduled = false; void this.flush() })
  }

  private async flush (): Promise<void> {
    if (this.writing || this.pending.length === 0) return
    this.writing = true
    const ops = this.pending
    const waiters = this.waiters
    this.pending = []
    this.waiters = []
    try {
      await this.db.batch(ops, { sync: this.mode === 'batch' } as object)
      for (const w of waiters) w.resolve()
    } catch (err) {
      for (const w of waiters) w.reject(err)
    } finally {
      this.writing = false
      if (this.pending.length > 0) this.schedule()
    }
  }

  /** Resolves when everything queued so far is written. */
  async drain (): Promise<void> {
    if (this.pending.length === 0 && !this.writing) { await this.chain; return }
    await this.write([])
  }
}

export async function openDb (path: string): Promise<RawDb> {
  const db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' })
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
