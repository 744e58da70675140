// The entries a PeerLink holds in memory, in key order, not yet sent: handed
// over by the delivery service as they are staged (before their commit is
// durable: `early`) or once committed. The store stays the source of truth:
// after (re)open the link reads the store (`fromStore`) until it has caught
// up, and whenever this buffer would exceed its bound it is dropped and the
// store is read again.
import type { OutboxEntry } from '../store/outbox.js'
import { frameOf } from './link-budget.js'
import { PENDING_BYTES, PENDING_ENTRIES } from './constants.js'

export class LinkQueue {
  private pending: OutboxEntry[] = []
  private pendingBytes = 0
  /** reading the store until a read hands over to memory */
  fromStore = true
  /** bumped whenever `pending` lost entries; a store read only hands over to memory if none were lost meanwhile */
  dropped = 0
  /** entries staged whose commit is in flight and that were not held early: later ones wait for them (key order) */
  private unheld = 0

  /** Hold a committed (or early) entry for the next frame; out of key order or over the bound, fall back to the store. */
  hold (e: OutboxEntry, lastSentKey: string | undefined): void {
    if (lastSentKey !== undefined && e.key <= lastSentKey) return
    const last = this.pending[this.pending.length - 1]
    if (last !== undefined && last.key > e.key) {
      // handed over out of commit order: fall back to the store, which has both
      this.drop()
      return
    }
    if (this.pending.length >= PENDING_ENTRIES || this.pendingBytes + e.packet.byteLength > PENDING_BYTES) {
      this.drop()
      return
    }
    this.pending.push(e)
    this.pendingBytes += e.packet.byteLength
  }

  drop (): void {
    this.pending = []
    this.pendingBytes = 0
    this.fromStore = true
    this.dropped++
  }

  /**
   * An entry staged, its commit in flight: held now when the link sends from
   * memory (`open`) and no entry staged before it still waits for its
   * commit. Returns the token `settled` takes (undefined: not held).
   */
  early (e: OutboxEntry, open: boolean, lastSentKey: string | undefined): number | undefined {
    if (open && !this.fromStore && this.unheld === 0) {
      const before = this.dropped
      this.hold(e, lastSentKey)
      if (this.dropped === before) return before
    }
    this.unheld++
    return undefined
  }

  /**
   * An entry's commit settled. Returns whether it must be handed over now
   * (as a committed entry): it was not held early, or the buffer it was held
   * in was dropped since (a store read begun before its commit landed may
   * have missed it). A failed commit drops what it was held in (the store,
   * which does not have it, is read again).
   */
  settled (token: number | undefined, ok: boolean): boolean {
    if (token === undefined) this.unheld--
    if (!ok) { if (token === this.dropped) this.drop(); return false }
    return token === undefined || token !== this.dropped
  }

  /**
   * The store read returned everything committed up to its snapshot; entries
   * committed later were handed over since (nothing was dropped meanwhile).
   * Continue from memory with both, unless that would exceed the bound.
   */
  adopt (listed: OutboxEntry[], lastSentKey: string | undefined): boolean {
    const tail = listed.length > 0 ? listed[listed.length - 1].key : lastSentKey
    const later = tail === undefined ? this.pending : this.pending.filter((e) => e.key > tail)
    const merged = listed.length === 0 ? later : [...listed, ...later]
    const bytes = merged.reduce((n, e) => n + e.packet.byteLength, 0)
    if (merged.length > PENDING_ENTRIES || bytes > PENDING_BYTES) return false
    this.pending = merged
    this.pendingBytes = bytes
    this.fromStore = false
    return true
  }

  /** The next frame from memory; entries already past their expiry are left to the TTL sweep. */
  take (frameBytes: number): OutboxEntry[] {
    const now = Date.now()
    let skip = 0
    while (skip < this.pending.length && this.pending[skip].exp <= now) skip++
    const out = frameOf(skip === 0 ? this.pending : this.pending.slice(skip), frameBytes)
    const used = skip + out.length
    for (let k = 0; k < used; k++) this.pendingBytes -= this.pending[k].packet.byteLength
    this.pending = this.pending.slice(used)
    return out
  }
}
