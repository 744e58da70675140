// The message ids an InboxStore knows in memory (inbox.ts): those whose write
// is queued but not yet durable (pending), and the latest ids made durable
// (bounded: a hit answers a duplicate without a store read). Two
// implementations, one behaviour (test/store/inbox-ids.test.ts runs an inbox
// over a real LevelDB with each and compares every answer and the store):
// - TwoMapIds, the reference: a Map of pending ids beside a FifoMap of
//   durable ones, as the inbox kept them before; an id is looked up in both,
//   and settling moves it from one to the other (get, delete, set);
// - OneMapIds: one Map for both, whose entry is the same object from staging
//   to eviction (pending while it has `done`), beside a queue of the durable
//   ids in the order they became durable; settling touches no map, only the
//   eviction of the oldest durable id does. Per received packet that is four
//   hash operations on a large table where the reference made about ten
//   (profiled in T2: the inbox's maps were 7 % of the receiver's main thread).
import { FifoMap } from '../util/fifo-map.js'

/** where a stored message id is: its node's inbox and seq */
export interface Where { nodeId: string, seq: number }

/** what memory knows of an id: `done` while its write is pending (resolves once it settled, durable or not) */
export interface Known extends Where { done?: Promise<void> }

export interface IdMemory {
  /** the id's entry, pending or durable */
  get: (id: string) => Known | undefined
  has: (id: string) => boolean
  /** the id's write is queued: its pending entry (hand it to settle) */
  stage: (id: string, nodeId: string, seq: number, done: Promise<void>) => Known
  /** the write of these staged ids (with their entries, same order) settled: durable ones are remembered, others forgotten */
  settle: (ids: readonly string[], staged: readonly Known[], durable: boolean) => void
}

/** told about each durable id dropped to stay within the limit, oldest first */
export type OnEvict = (id: string) => void

/** The reference: pending ids in one Map, durable ones in a FifoMap. */
export class TwoMapIds implements IdMemory {
  private readonly pending = new Map<string, Known>()
  private readonly recent: FifoMap<string, Where>

  constructor (limit: number, onEvict: OnEvict) {
    this.recent = new FifoMap<string, Where>(limit, (id) => { onEvict(id) })
  }

  get (id: string): Known | undefined { return this.pending.get(id) ?? this.recent.get(id) }

  has (id: string): boolean { return this.recent.has(id) || this.pending.has(id) }

  stage (id: string, nodeId: string, seq: number, done: Promise<void>): Known {
    const known = { nodeId, seq, done }
    this.pending.set(id, known)
    return known
  }

  settle (ids: readonly string[], _staged: readonly Known[], durable: boolean): void {
    for (const id of ids) {
      const where = this.pending.get(id)
      if (durable && where !== undefined) this.recent.set(id, { nodeId: where.nodeId, seq: where.seq })
      this.pending.delete(id)
    }
  }
}

/** One Map of pending and durable ids; the durable ones also in a queue, oldest first, for eviction. */
export class OneMapIds implements IdMemory {
  private readonly known = new Map<string, Known>()
  private queue: string[] = []
  private head = 0

  constructor (private readonly limit: number, private readonly onEvict: OnEvict) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`id memory limit must be a positive integer, got ${limit}`)
  }

  get (id: string): Known | undefined { return this.known.get(id) }

  has (id: string): boolean { return this.known.has(id) }

  stage (id: string, nodeId: string, seq: number, done: Promise<void>): Known {
    const known: Known = { nodeId, seq, done }
    this.known.set(id, known)
    return known
  }

  settle (ids: readonly string[], staged: readonly Known[], durable: boolean): void {
    for (let k = 0; k < ids.length; k++) {
      const entry = staged[k]
      if (durable) {
        // the entry stays in the map (the same object): it is durable from now on
        entry.done = undefined
        this.queue.push(ids[k])
      } else if (this.known.get(ids[k]) === entry) {
        this.known.delete(ids[k])
      }
    }
    while (this.queue.length - this.head > this.limit) this.evictOldest()
  }

  private evictOldest (): void {
    const id = this.queue[this.head++]
    this.known.delete(id)
    this.onEvict(id)
    // drop the consumed front of the queue now and then (amortised O(1))
    if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
  }
}
