import { EventEmitter } from 'node:events'
import { Serial } from '../util/serial.js'
import * as cbor from '@ipld/dag-cbor'
import { fromJsonBytes, scan, toJsonBytes, type Committer, type RawDb, type WriteOp } from './db.js'
import { Bucket } from './schema.js'
import { FifoMap } from '../util/fifo-map.js'

// Receipts. On the sending host: the history of each message it sent
// (`h!`): queued, delivered, pushed, read, refused, dead, with times. On the
// receiving host: signed receipts waiting to reach their sender host (`y!`),
// kept until that host took them, across restarts.

const SENT_PREFIX = Bucket.receipt
const OUT_PREFIX = Bucket.receiptOut
/** delivery outcomes remembered for messages whose history is not written yet */
const EARLY_OUTCOMES = 4096

export const RECEIPT_STATES = ['queued', 'delivered', 'pushed', 'read', 'refused', 'dead'] as const
export type ReceiptState = typeof RECEIPT_STATES[number]
/** how far a state is along the way; refused and dead end it */
export const STATE_RANK: Record<ReceiptState, number> = { queued: 0, delivered: 1, pushed: 2, read: 3, refused: 4, dead: 4 }

export interface ReceiptEvent { state: ReceiptState, at: number, reason?: string }

/** What the sending host keeps per message. */
export interface SentReceipt {
  id: string
  to: string
  from: string
  /** the host it was handed to (a peer id), or "local" */
  dest: string
  /** the sender asked for no receipts: none is kept beyond the delivery outcome, remote receipts are refused */
  off?: boolean
  events: ReceiptEvent[]
}

export interface OutgoingReceipt { key: string, dest: string, bytes: Uint8Array }

/** The state a history reached: the furthest one (a later refusal or death wins). */
export function stateOf (r: SentReceipt): ReceiptState {
  let best: ReceiptEvent | undefined
  for (const e of r.events) if (best === undefined || STATE_RANK[e.state] >= STATE_RANK[best.state]) best = e
  return best?.state ?? 'queued'
}

/** Emits 'change' (SentReceipt) after an event is stored. */
export class ReceiptStore extends EventEmitter {
  /** read-modify-write of marks and histories, one at a time */
  private readonly serialized = new Serial()
  /** delivery outcomes that came before the history of their message was started (a fast ack) */
  private readonly early = new FifoMap<string, ReceiptEvent[]>(EARLY_OUTCOMES)

  constructor (private readonly db: RawDb, private readonly committer: Committer) {
    super()
    this.setMaxListeners(0)
  }

  async get (id: string): Promise<SentReceipt | undefined> {
    const pending = this.pendingSent.get(id)
    if (pending !== undefined) return pending
    const v = await this.db.get(SENT_PREFIX + id)
    return v === undefined ? undefined : fromJsonBytes<SentReceipt>(v)
  }

  /** histories started and not yet handed to the store (written together, once per tick) */
  private readonly pendingSent = new Map<string, SentReceipt>()
  private flushScheduled = false

  /**
   * Start the history of a sent message. Off the send path's latency and with
   * no fsync: histories started in one tick go in one unsynced batch (the
   * message itself is durable; a history lost in an OS crash only makes later
   * receipts for it refused).
   */
  sent (item: Omit<SentReceipt, 'events'> & { state: ReceiptState }, now = Date.now()): void {
    const { state, ...r } = item
    const events = [{ state, at: now }, ...(this.early.get(r.id) ?? []).filter((e) => e.state !== state)]
    if (this.early.has(r.id)) this.early.set(r.id, [])
    this.pendingSent.set(r.id, { ...r, events })
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => { void this.serialized.run(async () => await this.flushSent()).catch((err) => this.emit('error-log', err)) })
  }

  private async flushSent (): Promise<void> {
    this.flushScheduled = false
    const batch = [...this.pendingSent.values()]
    if (batch.length === 0) return
    await this.committer.writeUnsynced(batch.map((r) => ({ type: 'put', key: SENT_PREFIX + r.id, value: toJsonBytes(r) })))
    for (const r of batch) if (this.pendingSent.get(r.id) === r) this.pendingSent.delete(r.id)
  }

  /**
   * Add events to histories that exist (each state once). `synced`: through
   * the group commit (remote receipts); else unsynced (delivery outcomes,
   * batched per acked frame). Returns the histories that changed.
   */
  async add (events: Array<{ id: string } & ReceiptEvent>, synced: boolean): Promise<SentReceipt[]> {
    if (events.length === 0) return []
    return await this.serialized.run(async () => {
      const changed = new Map<string, SentReceipt>()
      const values = await this.db.getMany(events.map((e) => SENT_PREFIX + e.id))
      events.forEach((e, k) => {
        const v = values[k]
        const r = changed.get(e.id) ?? this.pendingSent.get(e.id) ?? (v === undefined ? undefined : fromJsonBytes<SentReceipt>(v))
        if (r === undefined && !synced) this.early.set(e.id, [...(this.early.get(e.id) ?? []), { state: e.state, at: e.at, ...(e.reason === undefined ? {} : { reason: e.reason }) }])
        if (r === undefined || r.events.some((x) => x.state === e.state)) return
        if (r.off === true && (e.state === 'pushed' || e.state === 'read')) return // the sender asked for none
        r.events.push({ state: e.state, at: e.at, ...(e.reason === undefined ? {} : { reason: e.reason }) })
        changed.set(e.id, r)
      })
      if (changed.size === 0) return []
      const ops: WriteOp[] = [...changed.values()].map((r) => ({ type: 'put', key: SENT_PREFIX + r.id, value: toJsonBytes(r) }))
      if (synced) await this.committer.write(ops)
      else await this.committer.writeUnsynced(ops)
      for (const r of changed.values()) this.emit('change', r)
      return [...changed.values()]
    })
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
