// The outbox's expiry index (schema.ts `expiry`, e!<exp>!<queue key>), its
// records written late. An entry is staged without its record and waits here, in
// stage order, until it is settled or is among the oldest waiting once more
// than INDEX_AFTER do (those then get their records in one unsynced batch).
// Most entries are settled first (an ack comes within milliseconds): for them
// neither the record nor its deletion is ever written, two of the four store
// operations a sent packet cost (measured: T2 bursts ~8 % faster, the sender
// ~3 µs a packet less; docs/PERFORMANCE.md, session 20). The TTL sweep reads
// the waiting entries beside the records (OutboxStore.expired), and load()
// writes the records a crash left unwritten: after a restart every queued
// entry has its record again.
import type { Committer, RawDb, WriteOp } from './db.js'
import { hex, type OutboxKeys } from './outbox-keys.js'
import { expOfEntryValue } from './outbox-values.js'
import { Bucket } from './schema.js'

const EXPIRY_PREFIX = Bucket.expiry
const EMPTY = new Uint8Array(0)
/** records read or written per step when load() repairs the index */
const REPAIR_CHUNK = 5000

/** entries waiting for their index record, at most (the oldest INDEX_CHUNK are indexed past it) */
export const INDEX_AFTER = 4096
/** entries indexed in one batch when more than INDEX_AFTER wait */
export const INDEX_CHUNK = 1024

/** a queued entry whose index record is not (yet) written */
export interface Unindexed { key: string, exp: number }

/**
 * The entries without an index record: those waiting, and those whose record
 * is being written (`writing`, until that write settles). Keyed by queue key.
 */
export class LateIndex {
  private readonly waiting = new Map<string, Unindexed>()
  private readonly writing = new Map<string, Unindexed>()

  /** how many wait (not counting those being written) */
  get size (): number { return this.waiting.size }

  add (key: string, exp: number): void { this.waiting.set(key, { key, exp }) }

  /** Whether the entry of this queue key has no durable index record yet (waiting or being written). */
  has (key: string): boolean { return this.waiting.has(key) || this.writing.has(key) }

  /**
   * The entry is settled (or its write failed): forget it. True when it was
   * waiting, so no record was ever written and none is to be deleted; false
   * when its record exists or is being written (then delete the record).
   */
  settle (key: string): boolean {
    if (this.waiting.delete(key)) return true
    this.writing.delete(key)
    return false
  }

  /** The `n` oldest waiting entries, moved to `writing`: their records are being written. */
  startWriting (n: number): Unindexed[] {
    const out: Unindexed[] = []
    for (const u of this.waiting.values()) {
      if (out.length === n) break
      out.push(u)
    }
    for (const u of out) { this.waiting.delete(u.key); this.writing.set(u.key, u) }
    return out
  }

  /** Their records are written (durable with the next synced batch): no longer tracked. */
  written (list: Unindexed[]): void {
    for (const u of list) this.writing.delete(u.key)
  }

  /** Writing their records failed: those not settled meanwhile wait again. */
  failed (list: Unindexed[]): void {
    for (const u of list) if (this.writing.delete(u.key)) this.waiting.set(u.key, u)
  }

  /** The tracked entries whose expiry is at or before `now`. */
  due (now: number): Unindexed[] {
    const out: Unindexed[] = []
    for (const m of [this.waiting, this.writing]) for (const u of m.values()) if (u.exp <= now) out.push(u)
    return out
  }
}

/** The queue key an index record points at. */
function queueKeyOf (ikey: string): string { return ikey.slice(ikey.indexOf('!', EXPIRY_PREFIX.length) + 1) }

/** The expiry index of one OutboxStore: its records in the store, and the late entries in memory. */
export class ExpiryIndex {
  private readonly late = new LateIndex()

  constructor (private readonly db: RawDb, private readonly committer: Committer, private readonly keys: OutboxKeys) {}

  /** An entry is staged (its write handed to the Committer): its record comes late; the oldest waiting past INDEX_AFTER get theirs now. */
  staged (key: string, exp: number): void {
    this.late.add(key, exp)
    if (this.late.size > INDEX_AFTER) this.write(this.late.startWriting(INDEX_CHUNK))
  }

  /** The key of the index record of the entry with this queue key and expiry. */
  recordKey (key: string, exp: number): string { return this.keys.index(exp, key) }

  /** Whether the entry of this queue key has no durable record yet: it is queued (it leaves when settled or released). */
  isLate (key: string): boolean { return this.late.has(key) }

  /** The entry is removed: push the deletion of its record, unless it never had one. A record still being written may land after it: due() deletes such a leftover. */
  settle (key: string, exp: number, ops: WriteOp[]): void {
    if (!this.late.settle(key)) ops.push({ type: 'del', key: this.recordKey(key, exp) })
  }

  /** The entry's write failed: it was never queued. */
  release (key: string): void { this.late.settle(key) }

  /**
   * The queue keys of at most `max` entries due at `now`, each with its
   * record's key (undefined: a late entry): the late ones first, then from
   * the records, oldest expiry first (the caller reads every value; a sweep
   * takes the rest in its next call).
   */
  async due (now: number, max: number): Promise<Map<string, string | undefined>> {
    const keys = new Map<string, string | undefined>()
    for (const u of this.late.due(now)) { if (keys.size >= max) return keys; keys.set(u.key, undefined) }
    for await (const ikey of this.db.keys({ gt: EXPIRY_PREFIX, lt: EXPIRY_PREFIX + hex(now + 1, 12) })) {
      if (keys.size >= max) break
      const key = queueKeyOf(ikey)
      // a late entry being written may have its record already
      if (!keys.has(key)) keys.set(key, ikey)
    }
    return keys
  }

  /** Records whose entries are gone (read by due(), their values missing): delete them, unless the entry is late again. */
  async dropLeftovers (ikeys: Array<[key: string, ikey: string]>): Promise<void> {
    const ops: WriteOp[] = []
    for (const [key, ikey] of ikeys) if (!this.late.has(key)) ops.push({ type: 'del', key: ikey })
    if (ops.length > 0) await this.committer.writeUnsynced(ops)
  }

  /** At load: write the records of the queued entries (their keys) that have none. */
  async repair (queued: string[]): Promise<void> {
    if (queued.length === 0) return
    const indexed = new Set<string>()
    for await (const ikey of this.db.keys({ gt: EXPIRY_PREFIX, lt: EXPIRY_PREFIX + '\xff' })) indexed.add(queueKeyOf(ikey))
    const missing = queued.filter((k) => !indexed.has(k))
    for (let at = 0; at < missing.length; at += REPAIR_CHUNK) {
      const keys = missing.slice(at, at + REPAIR_CHUNK)
      const values = await this.db.getMany(keys)
      const ops: WriteOp[] = []
      values.forEach((v, k) => { if (v !== undefined) ops.push({ type: 'put', key: this.recordKey(keys[k], expOfEntryValue(v)), value: EMPTY }) })
      await this.committer.writeUnsynced(ops)
    }
  }

  /** The records of the oldest late entries, unsynced (a crash before they land: repair() writes them again). */
  private write (list: Unindexed[]): void {
    const ops: WriteOp[] = list.map((u) => ({ type: 'put', key: this.recordKey(u.key, u.exp), value: EMPTY }))
    this.committer.writeUnsynced(ops).then(() => { this.late.written(list) }, () => { this.late.failed(list) })
  }
}
