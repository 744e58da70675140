import { EventEmitter } from 'node:events'
import * as cbor from '@ipld/dag-cbor'
import { fromJsonBytes, scan, type Committer, type RawDb, type WriteOp } from './db.js'
import { batchable, batchKey, batchRange, batchValue, findInBatch, smallestOf, type DeliveredItem } from './receipt-batches.js'
import { decodeRecord, recordValue, type HistoryRecord } from './receipt-values.js'
import { Bucket } from './schema.js'

// Receipts. On the sending host: what became of each message it sent, one
// append-only record per state reached (`h!<id>!<state>`): nothing is written
// at send time (a queued message is its outbox entry), the delivered record
// rides the outbox removal's batch on ack, remote receipts one batch per frame.
// On the receiving host: signed receipts waiting to reach their sender host
// (`y!`), kept until that host took them, across restarts.

const SENT_PREFIX = Bucket.receipt
const OUT_PREFIX = Bucket.receiptOut
const BATCH_PREFIX = Bucket.receiptBatch

export const RECEIPT_STATES = ['queued', 'delivered', 'pushed', 'read', 'refused', 'dead'] as const
export type ReceiptState = typeof RECEIPT_STATES[number]
/** how far a state is along the way; refused and dead end it */
export const STATE_RANK: Record<ReceiptState, number> = { queued: 0, delivered: 1, pushed: 2, read: 3, refused: 4, dead: 4 }

export interface ReceiptEvent { state: ReceiptState, at: number, reason?: string }

/** Who a sent message went to, and how: carried by the record the sender writes itself (delivered, refused, dead). */
export interface SentMeta {
  to: string
  from: string
  /** the host it was handed to (a peer id), or "local" */
  dest: string
  /** the sender asked for no receipts: remote receipts are refused */
  off?: boolean
  /** when it was queued, ms (remote sends) */
  q?: number
}

/** What the sending host knows of a message. */
export interface SentReceipt extends SentMeta {
  id: string
  events: ReceiptEvent[]
}

export interface OutgoingReceipt { key: string, dest: string, bytes: Uint8Array }

/** A state reached by a message, to be stored; `meta` on the sender's own outcomes. */
export interface StateRecord extends ReceiptEvent { id: string, meta?: SentMeta }

/** The state a history reached: the furthest one (a later refusal or death wins). */
export function stateOf (r: { events: ReceiptEvent[] }): ReceiptState {
  let best: ReceiptEvent | undefined
  for (const e of r.events) if (best === undefined || STATE_RANK[e.state] >= STATE_RANK[best.state]) best = e
  return best?.state ?? 'queued'
}

/** The events in the order of the way (queued, delivered, pushed, read; refused and dead last), then by time. */
export function ordered (events: ReceiptEvent[]): ReceiptEvent[] {
  return [...events].sort((x, y) => STATE_RANK[x.state] - STATE_RANK[y.state] || x.at - y.at)
}

/** the write of one state of one message (a put: a repeated receipt overwrites its own key, no read first) */
export function stateOp (r: StateRecord): WriteOp {
  const rec: HistoryRecord = { at: r.at }
  if (r.reason !== undefined) rec.reason = r.reason
  if (r.meta !== undefined) rec.m = r.meta
  return { type: 'put', key: `${SENT_PREFIX}${r.id}!${r.state}`, value: recordValue(rec) }
}

/**
 * The delivered records of messages acked together: one batch record
 * (receipt-batches.ts) for those acked within the window of their send, a
 * per-id record for the others (and for a batch that does not fit the layout).
 */
export function deliveredOps (items: DeliveredItem[], at: number): WriteOp[] {
  const batch: DeliveredItem[] = []
  const ops: WriteOp[] = []
  for (const i of items) {
    if (batchable(i.id, at)) batch.push(i)
    else ops.push(stateOp({ id: i.id, state: 'delivered', at, meta: i.meta }))
  }
  if (batch.length === 0) return ops
  const value = batchValue(at, batch)
  if (value === undefined) return [...ops, ...batch.map((i) => stateOp({ id: i.id, state: 'delivered', at, meta: i.meta }))]
  ops.push({ type: 'put', key: batchKey(BATCH_PREFIX, batch), value })
  return ops
}

/** the records of `h!<id>` from before records were per state: one JSON history under the bare id */
interface LegacyHistory extends SentMeta { events: ReceiptEvent[] }

function legacy (value: Uint8Array): { meta: SentMeta, events: ReceiptEvent[] } {
  const { events, to, from, dest, off } = fromJsonBytes<LegacyHistory>(value)
  return { meta: { to, from, dest, off, q: events.find((e) => e.state === 'queued')?.at }, events: events.filter((e) => e.state !== 'queued') }
}

/** Emits 'change' (message id) after a state of it is stored. */
export class ReceiptStore extends EventEmitter {
  /** local sends: their delivered records, written together once per tick (unsynced) */
  private readonly pendingLocal = new Map<string, StateRecord>()
  private flushScheduled = false

  constructor (private readonly db: RawDb, private readonly committer: Committer) {
    super()
    this.setMaxListeners(0)
  }

  /** The stored states of a message and its meta, if any record has it (one prefix scan). */
  async records (id: string): Promise<{ meta?: SentMeta, events: ReceiptEvent[] }> {
    const local = this.pendingLocal.get(id)
    if (local !== undefined) return { meta: local.meta, events: [{ state: local.state, at: local.at }] }
    let meta: SentMeta | undefined
    const events: ReceiptEvent[] = []
    const base = SENT_PREFIX + id
    for await (const [key, value] of this.db.iterator({ gte: base, lt: `${base}!\xff` })) {
      if (key === base) { const old = legacy(value); meta ??= old.meta; events.push(...old.events); continue }
      const state = key.slice(base.length + 1) as ReceiptState
      if (key[base.length] !== '!' || !RECEIPT_STATES.includes(state)) continue // another id's key that sorts in between
      const rec = decodeRecord(value)
      if (rec.m !== undefined) meta = rec.m
      events.push({ state, at: rec.at, ...(rec.reason === undefined ? {} : { reason: rec.reason }) })
    }
    if (!events.some((e) => e.state === 'delivered')) {
      const batched = await this.batched(id)
      if (batched !== undefined) {
        meta ??= batched.m
        const after = events.findIndex((e) => e.state > 'delivered') // in key order, as the per-id record would be
        events.splice(after < 0 ? events.length : after, 0, { state: 'delivered', at: batched.at })
      }
    }
    return { meta, events }
  }

  /** The delivered record of `id` in a batch record, if any (one bounded range read). */
  private async batched (id: string): Promise<{ at: number, m: SentMeta } | undefined> {
    const range = batchRange(BATCH_PREFIX, id)
    if (range === undefined) return undefined
    for await (const [key, value] of this.db.iterator(range)) {
      if (smallestOf(BATCH_PREFIX, key) > id) continue
      const hit = findInBatch(value, id)
      if (hit !== undefined) return hit
    }
    return undefined
  }

  /** Store states (one batch): `synced` through the group commit (remote receipts), else unsynced. */
  async record (items: StateRecord[], synced: boolean): Promise<void> {
    if (items.length === 0) return
    const ops = items.map(stateOp)
    if (synced) await this.committer.write(ops)
    else await this.committer.writeUnsynced(ops)
    this.changed(items.map((i) => i.id))
  }

  /** Whether anyone waits for changes (receipt.wait): else the ids need not be collected. */
  waited (): boolean { return this.listenerCount('change') > 0 }

  /** Tell waiters these messages changed (after their records were written). */
  changed (ids: Iterable<string>): void {
    if (this.listenerCount('change') === 0) return
    for (const id of new Set(ids)) this.emit('change', id)
  }

  /**
   * A message delivered into a local inbox at send time. Off the send path's
   * latency and with no fsync: records of one tick go in one unsynced batch
   * (the message itself is durable in the inbox).
   */
  local (item: StateRecord): void {
    this.pendingLocal.set(item.id, item)
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => { void this.flushLocal().catch((err) => this.emit('error-log', err)) })
  }

  private async flushLocal (): Promise<void> {
    this.flushScheduled = false
    const batch = [...this.pendingLocal.values()]
    if (batch.length === 0) return
    await this.committer.writeUnsynced(batch.map(stateOp))
    for (const r of batch) if (this.pendingLocal.get(r.id) === r) this.pendingLocal.delete(r.id)
  }

  /** Queue signed receipts for sender hosts (one group-commit batch). */
  async queue (items: Array<{ dest: string, packetId: string, state: ReceiptState, bytes: Uint8Array }>): Promise<void> {
    if (items.length === 0) return
    await this.committer.write(items.map((i) => ({ type: 'put', key: `${OUT_PREFIX}${i.dest}!${i.packetId}!${i.state}`, value: cbor.encode(i.bytes) })))
  }

  /** Receipts waiting, per destination host, oldest message first, at most `limit` in all. */
  async waiting (limit: number): Promise<OutgoingReceipt[]> {
    const out: OutgoingReceipt[] = []
    for await (const [key, value] of scan(this.db, OUT_PREFIX, { limit })) {
      const dest = key.slice(OUT_PREFIX.length, key.indexOf('!', OUT_PREFIX.length))
      out.push({ key, dest, bytes: cbor.decode<Uint8Array>(value) })
    }
    return out
  }

  /** The sender host took (or refused for good) these receipts. */
  async done (keys: string[]): Promise<void> {
    if (keys.length > 0) await this.committer.write(keys.map((key) => ({ type: 'del', key })))
  }
}
