// Node ids a decoder checked valid recently (decode-fast.ts), by their encoded bytes.

/** sets of the cache (a power of two), each of WAYS entries */
const RECENT_SETS = 64
/** entries per set: a stream's two ids (from, to) that hash to one set both stay */
const WAYS = 2

type Entry = { bytes: Uint8Array, id: string } | undefined

/**
 * The encoded form (head and UTF-8) of node ids that were checked valid
 * recently, in sets chosen by a hash of their last bytes, two entries each
 * (the one found or remembered last first): a stream carries the same few
 * from/to ids, and equal bytes are the same valid id, so its text is neither
 * decoded nor checked again. With one entry per set, a stream whose from and
 * to ids hashed to one set (1 in 64 pairs) pushed each other out on every
 * packet, and every id was decoded and checked again (~0.35 us more per
 * rendered entry, measured in process).
 */
export class RecentIds {
  private readonly slots: Entry[] = new Array(RECENT_SETS * WAYS).fill(undefined)

  private static set (d: Uint8Array, end: number): number {
    return ((d[end - 1] * 31 + d[end - 2] * 7 + d[end - 3]) & (RECENT_SETS - 1)) * WAYS
  }

  /** The entry whose encoded bytes (head and text, at most 2 + 255) start at `start`. */
  find (d: Uint8Array, start: number, end: number): { bytes: Uint8Array, id: string } | undefined {
    const b = d[start]
    const n = b >= 0x60 && b < 0x78 ? 1 + b - 0x60 : b === 0x78 && start + 1 < end ? 2 + d[start + 1] : 0
    if (n < 4 || start + n > end) return undefined
    const s = RecentIds.set(d, start + n)
    const first = this.slots[s]
    if (same(first, d, start, n)) return first
    const second = this.slots[s + 1]
    if (!same(second, d, start, n)) return undefined
    // the one found last first
    this.slots[s] = second
    this.slots[s + 1] = first
    return second
  }

  remember (bytes: Uint8Array, id: string): void {
    if (bytes.length < 4 || bytes.length > 257) return
    const s = RecentIds.set(bytes, bytes.length)
    this.slots[s + 1] = this.slots[s]
    this.slots[s] = { bytes, id }
  }
}

function same (e: Entry, d: Uint8Array, start: number, n: number): e is { bytes: Uint8Array, id: string } {
  if (e === undefined || e.bytes.length !== n) return false
  const k = e.bytes
  for (let i = n - 1; i >= 0; i--) if (d[start + i] !== k[i]) return false
  return true
}
