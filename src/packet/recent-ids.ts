// Node ids a decoder checked valid recently (decode-fast.ts), by their encoded bytes.

/** slots of the cache (a power of two) */
const RECENT_IDS = 64

/**
 * The encoded form (head and UTF-8) of node ids that were checked valid
 * recently, direct-mapped by a hash of their last bytes: a stream carries
 * the same few from/to ids, and equal bytes are the same valid id, so its
 * text is neither decoded nor checked again.
 */
export class RecentIds {
  private readonly slots: Array<{ bytes: Uint8Array, id: string } | undefined> = new Array(RECENT_IDS).fill(undefined)

  private static slot (d: Uint8Array, end: number): number {
    return (d[end - 1] * 31 + d[end - 2] * 7 + d[end - 3]) & (RECENT_IDS - 1)
  }

  /** The entry whose encoded bytes (head and text, at most 2 + 255) start at `start`. */
  find (d: Uint8Array, start: number, end: number): { bytes: Uint8Array, id: string } | undefined {
    const b = d[start]
    const n = b >= 0x60 && b < 0x78 ? 1 + b - 0x60 : b === 0x78 && start + 1 < end ? 2 + d[start + 1] : 0
    if (n < 4 || start + n > end) return undefined
    const e = this.slots[RecentIds.slot(d, start + n)]
    if (e === undefined || e.bytes.length !== n) return undefined
    const k = e.bytes
    for (let i = n - 1; i >= 0; i--) if (d[start + i] !== k[i]) return undefined
    return e
  }

  remember (bytes: Uint8Array, id: string): void {
    if (bytes.length < 4 || bytes.length > 257) return
    this.slots[RecentIds.slot(bytes, bytes.length)] = { bytes, id }
  }
}
