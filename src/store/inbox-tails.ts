// The newest durable entries of watched nodes, in memory, so a caught-up
// follower reads new entries without a store read (bounded per node).
import type { InboxEntry } from './inbox-values.js'

/** per watched node: the newest durable entries kept in memory for caught-up followers */
const TAIL_ENTRIES = 1024
const TAIL_BYTES = 4 * 1024 * 1024

/**
 * The newest durable entries of a watched node, consecutive by seq:
 * entries[k].seq === first + k, and the last one is the newest entry made
 * durable (any later durable entry resets the tail to start at itself).
 */
interface Tail { first: number, entries: InboxEntry[], bytes: number }

export class InboxTails {
  private readonly watchers = new Map<string, number>()
  private readonly tails = new Map<string, Tail>()

  /** A follower of `nodeId` is attached; returns the function that detaches it. */
  watch (nodeId: string): () => void {
    this.watchers.set(nodeId, (this.watchers.get(nodeId) ?? 0) + 1)
    let attached = true
    return () => {
      if (!attached) return
      attached = false
      const n = (this.watchers.get(nodeId) ?? 1) - 1
      if (n > 0) { this.watchers.set(nodeId, n); return }
      this.watchers.delete(nodeId)
      this.tails.delete(nodeId)
    }
  }

  watched (nodeId: string): boolean {
    return this.watchers.has(nodeId)
  }

  /** Forget a node's tail (its entries were pruned or removed). */
  reset (nodeId: string): void {
    this.tails.delete(nodeId)
  }

  /** Add a just-durable entry to its node's tail; a gap (a failed write, an out-of-order finish) restarts the tail. */
  keep (nodeId: string, entry: InboxEntry): void {
    if (!this.watchers.has(nodeId)) return
    let tail = this.tails.get(nodeId)
    if (tail === undefined || entry.seq !== tail.first + tail.entries.length) {
      tail = { first: entry.seq, entries: [], bytes: 0 }
      this.tails.set(nodeId, tail)
    }
    tail.entries.push(entry)
    tail.bytes += entry.packet.byteLength
    while (tail.entries.length > 1 && (tail.entries.length > TAIL_ENTRIES || tail.bytes > TAIL_BYTES)) {
      const dropped = tail.entries.shift() as InboxEntry
      tail.bytes -= dropped.packet.byteLength
      tail.first++
    }
  }

  /**
   * Entries after `after` from the in-memory tail, or undefined when the tail
   * does not start at or before `after + 1` (then the store answers). Nothing
   * newer than the tail's end is durable and announced yet.
   */
  read (nodeId: string, after: number, limit: number): InboxEntry[] | undefined {
    const tail = this.tails.get(nodeId)
    if (tail === undefined) return undefined
    const from = after + 1 - tail.first
    if (from < 0 || from > tail.entries.length) return undefined
    return tail.entries.slice(from, from + limit)
  }
}
