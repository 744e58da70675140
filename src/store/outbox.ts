import * as cbor from '@ipld/dag-cbor'
import { decodeCbor } from '../util/cbor-decode.js'
import { OutboxFullError } from '../util/errors.js'
import { scan, type Committer, type RawDb, type WriteOp } from './db.js'
import { FifoMap } from '../util/fifo-map.js'
import { Bucket } from './schema.js'
import { decodeEntryValue, EntryValueEncoder } from './outbox-values.js'
import { hex, OutboxKeys, seqOfKey } from './outbox-keys.js'
import { ExpiryIndex } from './outbox-expiry.js'
import { isValueGone, type ValueReader } from './value-log.js'

const OUTBOX_PREFIX = Bucket.outbox
const DEAD_PREFIX = Bucket.dead
/** entries deleted per retention step */
const PRUNE_CHUNK = 5000
/** keys of settled (delivered or dead) entries remembered, so most settles need no store read */
export const SETTLED_KEYS = 8192

export interface OutboxEntry {
  /** store key: o!<destPeer>!<enqueue seq, 16 hex digits> */
  key: string
  dest: string
  packetId: string
  to: string
  from: string
  /** expiry, ms since the epoch */
  exp: number
  packet: Uint8Array
  /** the enqueue seq of its key, when the store wrote or read it (seqOfKey(key)) */
  seq?: number
  /**
   * set by the OutboxStore: the settle epoch at which it staged the entry or
   * began the read that returned it (see OutboxStore.present); a field, not a
   * WeakMap entry per packet (those cost the GC more than the entry itself)
   */
  epoch?: number
}

export interface DeadLetter {
  packetId: string
  dest: string
  to: string
  from: string
  code: string
  reason: string
  at: number
  packet: Uint8Array
}

export interface Doomed { entry: OutboxEntry, code: string, reason: string }

/** Commits a dead-letter move (and whatever else must land in the same batch). */
export type KillCommit = (ops: WriteOp[], killed: Doomed[]) => Promise<void>

export { hex, hexReference, outboxKey, seqOfKey } from './outbox-keys.js'

function deadKey (at: number, packetId: string): string {
  return `${DEAD_PREFIX}${hex(at, 12)}!${packetId}`
}

function parseKey (key: string): { dest: string, seq: number } {
  const rest = key.slice(OUTBOX_PREFIX.length)
  const i = rest.lastIndexOf('!')
  return { dest: rest.slice(0, i), seq: parseInt(rest.slice(i + 1), 16) }
}

function toEntry (key: string, value: Uint8Array, epoch?: number, values?: ValueReader): OutboxEntry {
  const v = decodeEntryValue(value, values)
  return { key, dest: parseKey(key).dest, packetId: v.i, to: v.to, from: v.from, exp: v.exp, packet: v.p, seq: seqOfKey(key), epoch }
}

/** What else a removal writes, and how (see OutboxStore.remove). */
export interface RemoveOptions {
  extra?: (live: OutboxEntry[]) => WriteOp[]
  commit?: (ops: WriteOp[]) => Promise<void>
}

/**
 * Per-destination-host queues of durable packets waiting for an ack, an expiry
 * index over them, and the dead letters of packets that expired or were
 * rejected for good.
 *
 * Queue keys carry an enqueue sequence number that is assigned in the same
 * synchronous step that hands the write to the Committer, so key order is
 * commit order: a link that reads "after the last key it sent" never skips an
 * entry that became durable later than a newer one.
 */
export class OutboxStore {
  /** the queue entry values this store writes */
  private readonly values = new EntryValueEncoder()
  /** the queue and index keys this store writes, as flat strings */
  private readonly keys = new OutboxKeys()
  private readonly depth = new Map<string, number>()
  /** the expiry index over the queues, its records written late (outbox-expiry.ts) */
  private readonly index: ExpiryIndex
  private deadCount = 0
  private nextSeq = 1
  /** remove/kill run one at a time, so an entry is settled exactly once */
  private settling: Promise<void> = Promise.resolve()
  /**
   * Whether an entry is still queued, mostly without a store read. `epoch`
   * counts settles whose write completed; every entry handed out is tagged
   * with the epoch at which it was staged or at which the store read that
   * returned it began, so it cannot hold a key settled at or before that
   * epoch. `settled` holds the keys of the latest settles (key -> epoch) and
   * holds every key settled at an epoch >= `coveredFrom`. An entry tagged
   * r with r + 1 >= coveredFrom is queued iff its key is not in `settled`;
   * older entries are checked in the store. A key is held as its seq (a
   * number: no string to hash or to keep alive), which names it alone since
   * every seq comes from this store's one counter and load() found none twice;
   * otherwise (`bySeq` false) as the key string, the reference.
   */
  private epoch = 0
  private coveredFrom = 1
  private bySeq = true
  private readonly settled = new FifoMap<number | string, number>(SETTLED_KEYS, (_key, at) => {
    if (at + 1 > this.coveredFrom) this.coveredFrom = at + 1
  })

  /** `valueLog`: the value log holding the packets of large entries (value-log.ts) */
  constructor (private readonly db: RawDb, private readonly committer: Committer, private readonly capPerDest: number, private readonly valueLog?: ValueReader) {
    this.index = new ExpiryIndex(db, committer, this.keys)
  }

  async load (): Promise<void> {
    const seqs = new Set<number>()
    const queued: string[] = []
    for await (const key of this.db.keys({ gt: OUTBOX_PREFIX, lt: OUTBOX_PREFIX + '\xff' })) {
      queued.push(key)
      const { dest, seq } = parseKey(key)
      this.depth.set(dest, (this.depth.get(dest) ?? 0) + 1)
      if (seq >= this.nextSeq) this.nextSeq = seq + 1
      const own = seqOfKey(key)
      if (own !== undefined && seqs.size === seqs.add(own).size) this.bySeq = false // two queues hold one seq: keys are held as strings
    }
    for await (const _ of this.db.keys({ gt: DEAD_PREFIX, lt: DEAD_PREFIX + '\xff' })) this.deadCount++
    await this.index.repair(queued)
  }

  destinations (): string[] {
    return [...this.depth.entries()].filter(([, n]) => n > 0).map(([d]) => d)
  }

  depthOf (dest: string): number { return this.depth.get(dest) ?? 0 }

  totals (): { queued: number, dead: number, byDestination: Record<string, number> } {
    let queued = 0
    const byDestination: Record<string, number> = {}
    for (const [d, n] of this.depth) { if (n > 0) { byDestination[d] = n; queued += n } }
    return { queued, dead: this.deadCount, byDestination }
  }

  /**
   * Reserve room and build the write op of the entry (its expiry index record
   * comes late, if at all: outbox-expiry.ts). The caller must hand it to
   * the Committer synchronously (same tick), which keeps key order equal to
   * commit order; if that write fails, release() the entry.
   */
  prepare (dest: string, packetId: string, to: string, toLabel: string, from: string, exp: number, packet: Uint8Array): WriteOp[] {
    return this.stage(dest, packetId, to, toLabel, from, exp, packet).ops
  }

  /** How many bytes a queue value of this entry holds before its packet (see stage's `whole`). */
  headRoom (packetId: string, to: string, from: string): number {
    return this.values.headLength(packetId, to, from)
  }

  /**
   * prepare(), also returning the entry as it will be read back once
   * committed. `whole`: a buffer of headRoom() free bytes then `packet`
   * (PacketCodec.encodeAfter), which becomes the stored value as it is.
   */
  stage (dest: string, packetId: string, to: string, toLabel: string, from: string, exp: number, packet: Uint8Array, whole?: Uint8Array): { ops: WriteOp[], entry: OutboxEntry } {
    const n = this.depthOf(dest)
    if (n >= this.capPerDest) {
      throw new OutboxFullError(`outbox full for ${toLabel}: ${n} packets already wait for its host (limit ${this.capPerDest})`)
    }
    this.depth.set(dest, n + 1)
    const seq = this.nextSeq++
    const key = this.keys.queue(dest, seq)
    const value = this.values.encode(packetId, to, from, exp, packet, whole)
    const ops: WriteOp[] = [{ type: 'put', key, value, split: value.byteLength - packet.byteLength }]
    this.index.staged(key, exp)
    // the entry shares the stored value's bytes: the caller's packet buffer is not kept alive beside it
    const entry = { key, dest, packetId, to, from, exp, packet: value.subarray(value.byteLength - packet.byteLength), seq, epoch: this.epoch }
    return { ops, entry }
  }

  /** Undo the reservation of a staged entry whose write failed. */
  release (entry: OutboxEntry): void {
    this.index.release(entry.key)
    this.depth.set(entry.dest, Math.max(0, this.depthOf(entry.dest) - 1))
  }

  /** An entry read by a read that began at `epoch`; undefined if its packet's value-log segment is gone (settled since). */
  private read (key: string, value: Uint8Array, epoch: number): OutboxEntry | undefined {
    try {
      return toEntry(key, value, epoch, this.valueLog)
    } catch (err) {
      if (isValueGone(err)) return undefined
      throw err
    }
  }

  async list (dest: string, afterKey: string | undefined, limit: number): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = []
    const epoch = this.epoch
    for await (const [key, value] of scan(this.db, `${OUTBOX_PREFIX}${dest}!`, { after: afterKey, limit })) {
      const e = this.read(key, value, epoch)
      if (e !== undefined) out.push(e)
    }
    return out
  }

  /**
   * The next frame's worth of entries after `afterKey`: at most `limit`
   * entries and, past the first, at most `maxBytes` of packets. `complete`
   * says the read reached the end of the queue (as of its snapshot), so
   * nothing older than what it returned is left unread. Values past the
   * budget are not read (large packets: a frame of 16 x 64 KiB used to read
   * 256 x 64 KiB and drop the rest).
   */
  async listFrame (dest: string, afterKey: string | undefined, limit: number, maxBytes: number): Promise<{ entries: OutboxEntry[], complete: boolean }> {
    const entries: OutboxEntry[] = []
    let bytes = 0
    const epoch = this.epoch
    for await (const [key, value] of scan(this.db, `${OUTBOX_PREFIX}${dest}!`, { after: afterKey, limit: limit + 1 })) {
      const e = this.read(key, value, epoch)
      if (e === undefined) continue
      if (entries.length === limit || (entries.length > 0 && bytes + e.packet.byteLength > maxBytes)) return { entries, complete: false }
      entries.push(e)
      bytes += e.packet.byteLength
    }
    return { entries, complete: true }
  }

  /** The packets of these queued entries, read back from the store (undefined: no longer queued). */
  async packetsOf (keys: string[]): Promise<Array<Uint8Array | undefined>> {
    const values = await this.db.getMany(keys)
    return values.map((v, k) => v === undefined ? undefined : this.read(keys[k], v, this.epoch)?.packet)
  }

  private async settle<T> (fn: () => Promise<T>): Promise<T> {
    const run = this.settling.then(fn)
    this.settling = run.then(() => {}, () => {})
    return await run
  }

  /**
   * Of these entries, which are still queued (not yet delivered or dead): a
   * late entry is (it leaves `late` when settled); others are answered from
   * `settled` where it can be, else read through the expiry index, whose
   * record is deleted in the entry's removal batch and whose value is empty
   * (the packets are not copied out).
   */
  private async present (entries: OutboxEntry[]): Promise<boolean[]> {
    const out = new Array<boolean>(entries.length)
    const ask: number[] = []
    for (let k = 0; k < entries.length; k++) {
      const r = entries[k].epoch
      const held = r !== undefined && r + 1 >= this.coveredFrom ? this.heldKey(entries[k]) : undefined
      if (this.index.isLate(entries[k].key)) out[k] = true
      else if (held !== undefined) out[k] = !this.settled.has(held)
      else ask.push(k)
    }
    if (ask.length > 0) {
      const values = await this.db.getMany(ask.map((k) => this.index.recordKey(entries[k].key, entries[k].exp)))
      ask.forEach((k, n) => { out[k] = values[n] !== undefined })
    }
    return out
  }

  /** A settle's write completed: remember its keys (bounded). */
  private noteSettled (entries: OutboxEntry[]): void {
    const epoch = ++this.epoch
    for (const e of entries) {
      const held = this.heldKey(e)
      if (held !== undefined) this.settled.set(held, epoch)
      // a key not held: entries read or staged before this settle are checked in the store
      else this.coveredFrom = epoch + 1
    }
  }

  /** How `settled` holds an entry's key: its seq, or the key string (bySeq false); undefined: neither (not a key this store wrote). */
  private heldKey (e: OutboxEntry): number | string | undefined {
    if (!this.bySeq) return e.key
    return e.seq ?? seqOfKey(e.key)
  }

  /** The ops that remove a queued entry: its record, and its index record unless it never had one. */
  private forget (entry: OutboxEntry, ops: WriteOp[]): void {
    this.depth.set(entry.dest, Math.max(0, this.depthOf(entry.dest) - 1))
    ops.push({ type: 'del', key: entry.key })
    this.index.settle(entry.key, entry.exp, ops)
  }

  /**
   * Delivered: remove the entries. Not synced, and not queued behind the
   * group commit, so no `send` waits for it: a removal lost in a crash only
   * means the entries are resent after the restart, and the receiver, which
   * acked them from a synced batch, drops them as duplicates by message id
   * (test/delivery/crash.test.ts). `extra`: ops for the same batch, of the
   * entries removed (their receipts). `commit`, when given, writes the ops
   * instead (with whatever must land in the same batch: an A2A agent's
   * answer, the task it opened), and is called even when none is still queued.
   */
  async remove (entries: OutboxEntry[], opts: RemoveOptions = {}): Promise<number> {
    const { extra, commit } = opts
    if (entries.length === 0) return 0
    return await this.settle(async () => {
      const found = await this.present(entries)
      const live = entries.filter((_, k) => found[k])
      const ops: WriteOp[] = live.length > 0 && extra !== undefined ? extra(live) : []
      for (const e of live) this.forget(e, ops)
      if (commit !== undefined) await commit(ops)
      else await this.committer.writeUnsynced(ops)
      if (live.length > 0) this.noteSettled(live)
      return live.length
    })
  }

  /**
   * Move entries to the dead letters with a reason. Entries already delivered
   * or dead are skipped. `commit` writes the ops (default: on their own); the
   * delivery service uses it to land the sender's ERROR notice in the same batch.
   */
  async kill (items: Doomed[], commit?: KillCommit): Promise<Doomed[]> {
    if (items.length === 0) return []
    return await this.settle(async () => {
      const found = await this.present(items.map((d) => d.entry))
      const live = items.filter((_, k) => found[k])
      if (live.length === 0) return []
      const ops: WriteOp[] = []
      const at = Date.now()
      for (const { entry, code, reason } of live) {
        this.forget(entry, ops)
        const dead: DeadLetter = { packetId: entry.packetId, dest: entry.dest, to: entry.to, from: entry.from, code, reason, at, packet: entry.packet }
        ops.push({ type: 'put', key: deadKey(at, entry.packetId), value: cbor.encode(dead) })
      }
      if (commit !== undefined) await commit(ops, live)
      else await this.committer.write(ops)
      this.noteSettled(live.map((d) => d.entry))
      this.deadCount += live.length
      return live
    })
  }

  /**
   * Entries whose expiry is at or before `now`, oldest expiry first, read
   * through the expiry index and the late entries (not a scan of the queues).
   * Entries for which `skip` says true (e.g. in flight right now) are passed
   * over. An index record whose entry is gone (its deletion overtook its late
   * write) is deleted.
   */
  async expired (now: number, limit: number, skip: (entry: OutboxEntry) => boolean = () => false): Promise<OutboxEntry[]> {
    const epoch = this.epoch
    const keys = await this.index.due(now, limit * 4)
    if (keys.size === 0) return []
    const list = [...keys.keys()]
    const values = await this.db.getMany(list)
    const found: OutboxEntry[] = []
    const leftovers: Array<[string, string]> = []
    values.forEach((v, k) => {
      const ikey = keys.get(list[k])
      const e = v === undefined ? undefined : this.read(list[k], v, epoch)
      if (e !== undefined) found.push(e)
      else if (v === undefined && ikey !== undefined) leftovers.push([list[k], ikey])
    })
    await this.index.dropLeftovers(leftovers)
    found.sort((a, b) => a.exp - b.exp)
    const out: OutboxEntry[] = []
    for (const e of found) { if (out.length === limit) break; if (!skip(e)) out.push(e) }
    return out
  }

  /** Dead letters, oldest first. */
  async deadLetters (limit: number): Promise<DeadLetter[]> {
    const out: DeadLetter[] = []
    for await (const [, value] of scan(this.db, DEAD_PREFIX, { limit })) out.push(decodeCbor<DeadLetter>(value))
    return out
  }

  /** Retention: delete dead letters that died before `before`. Returns how many went. */
  async pruneDead (before: number): Promise<number> {
    let total = 0
    for (;;) {
      const ops: WriteOp[] = []
      for await (const key of this.db.keys({ gt: DEAD_PREFIX, lt: DEAD_PREFIX + hex(before, 12), limit: PRUNE_CHUNK })) {
        ops.push({ type: 'del', key })
      }
      // unsynced: a dead letter whose deletion is lost is pruned again next time
      await this.committer.writeUnsynced(ops)
      this.deadCount = Math.max(0, this.deadCount - ops.length)
      total += ops.length
      if (ops.length < PRUNE_CHUNK) return total
    }
  }
}
