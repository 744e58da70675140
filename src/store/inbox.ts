import { EventEmitter } from 'node:events'
import { AmeshError, InboxFullError } from '../util/errors.js'
import { fromJsonBytes, scan, toJsonBytes, type Committer, type RawDb, type WriteOp } from './db.js'
import { Bucket } from './schema.js'
import { DedupRecords } from './inbox-dedup.js'
import { ulidTime, ulidTimePrefix } from './ulid-time.js'
import { OneMapIds, type IdMemory, type Known, type OnEvict, type Where } from './inbox-ids.js'
import { InboxTails } from './inbox-tails.js'
import { DedupValueEncoder, ENTRY_HEADER, type InboxEntry, decodeInboxValue, inboxValueOf, receivedOf, seqFromKey, seqKey } from './inbox-values.js'
import { mark } from '../util/trace.js'
import { eachStored, plainOrGone, readStoredPage, storedPageOf, type StoredPage } from './inbox-stored.js'
import type { ValueReader } from './value-log.js'

export type { StoredPage } from './inbox-stored.js'
export { decodeInboxValue, encodeDedupValue, encodeInboxValue, seqKey, type InboxEntry } from './inbox-values.js'

const INBOX_PREFIX = Bucket.inbox
const CURSOR_PREFIX = Bucket.cursor


export interface AppendItem {
  nodeId: string
  packetId: string
  packet: Uint8Array
  /**
   * The packet with ENTRY_HEADER free bytes before it, in one buffer
   * (`packet` is its view past them): stored as the value once its header
   * is filled in, instead of a copy (fillInboxValue).
   */
  value?: Uint8Array
}

/**
 * A packet whose id (a ULID) is older than the dedup window: the receiver can
 * no longer tell whether it was delivered before, so it refuses it for good.
 */
export class StalePacketError extends AmeshError {
  constructor (message: string) {
    super('STALE_PACKET', message)
    this.name = 'StalePacketError'
  }
}

export type AppendError = InstanceType<typeof InboxFullError> | StalePacketError

export type AppendResult = { seq: number, duplicate: boolean } | { error: AppendError }

export interface AppendOptions {
  /** nodes whose inbox refused a packet earlier in this stream (FIFO latch) */
  latch?: Set<string>
  /** more operations to commit in the same batch (e.g. dead-letter moves) */
  extra?: WriteOp[]
}

/** default dedup window: message ids are remembered this long */
export const DEFAULT_DEDUP_WINDOW = 7 * 24 * 60 * 60 * 1000
/** entries deleted per retention step */
const PRUNE_CHUNK = 5000

interface NodeState { last: number, cursor: number, oldest: number }
export type { Where } from './inbox-ids.js'
/** checked[k]: memory did not know item k's id when looked up, so `found` answers for it (from the store, or new) */
interface Lookup { checked: boolean[], found: Map<string, Where> }
/** the id memory an inbox uses (inbox-ids.ts; tests pass the reference) */
export type IdMemoryOf = (limit: number, onEvict: OnEvict) => IdMemory

/** stored message ids remembered in memory (answers resends without a store read) */
const RECENT_IDS = 16_384
interface Fresh { nodeId: string, entry: InboxEntry }

/**
 * Per-node inboxes: strictly increasing, gap-free sequence numbers; a durable
 * acked cursor per node; duplicates dropped by message id within the dedup
 * window. Emits 'append' (nodeId, lastSeq) once entries are durable.
 */
export class InboxStore extends EventEmitter {
  private readonly dedupValues = new DedupValueEncoder()
  /** the message-id records (inbox-dedup.ts) */
  private readonly dedup: DedupRecords
  private readonly state = new Map<string, NodeState>()
  /** followers per node, and the in-memory tail kept for each watched node */
  private readonly tails = new InboxTails()

  /** `valueLog`: the value log holding the packets of large entries (value-log.ts) */
  constructor (private readonly db: RawDb, private readonly committer: Committer, private readonly cap: number, readonly dedupWindow = DEFAULT_DEDUP_WINDOW, idMemory: IdMemoryOf = (limit, onEvict) => new OneMapIds(limit, onEvict), private readonly valueLog?: ValueReader) {
    super()
    this.setMaxListeners(0)
    this.dedup = new DedupRecords(db, committer)
    this.ids = idMemory(RECENT_IDS, (oldest) => {
      if (this.floor !== undefined && oldest > this.floor) this.floor = oldest
    })
  }

  private async loadState (nodeId: string): Promise<NodeState> {
    let st = this.state.get(nodeId)
    if (st !== undefined) return st
    let last = 0
    let oldest = 0
    for await (const [key] of scan(this.db, `${INBOX_PREFIX}${nodeId}!`, { reverse: true, limit: 1 })) last = seqFromKey(key)
    for await (const [key] of scan(this.db, `${INBOX_PREFIX}${nodeId}!`, { limit: 1 })) oldest = seqFromKey(key)
    const cursorBytes = await this.db.get(CURSOR_PREFIX + nodeId)
    const cursor = cursorBytes === undefined ? 0 : fromJsonBytes<number>(cursorBytes)
    st = this.state.get(nodeId) ?? { last: Math.max(last, cursor), cursor, oldest }
    this.state.set(nodeId, st)
    return st
  }

  async info (nodeId: string): Promise<{ last: number, cursor: number, unacked: number }> {
    const st = await this.loadState(nodeId)
    return { last: st.last, cursor: st.cursor, unacked: st.last - st.cursor }
  }

  /**
   * Ids whose write is queued but not yet durable, and the ids known to be
   * stored (durable), most recent last, bounded: a hit answers a duplicate
   * without a store read. A miss proves nothing, so it is always checked
   * against the store (`i~`, and `d!` while an upgraded store holds any).
   */
  private readonly ids: IdMemory

  /**
   * Every stored id that `ids` does not hold sorts at or below `floor`
   * (string order, the order of the id keys): it starts as the greatest id
   * in the store (inbox-dedup.ts, either prefix) when this process first
   * appends, and rises to each id that falls out of `ids`. Senders mint ids in increasing order, so a new
   * packet's id sorts above it and is known to be new without a store read;
   * only resends of older ids are looked up.
   */
  private floor?: string

  private async loadFloor (): Promise<string> {
    if (this.floor !== undefined) return this.floor
    const newest = await this.dedup.newest()
    this.floor ??= newest
    return this.floor
  }

  /**
   * The stored location of each id that memory cannot answer, read from the
   * store in one getMany. Ids queued by other appends are left to `seen`.
   * Runs under the append lock (no id becomes durable while the floor loads).
   */
  private async lookup (items: AppendItem[]): Promise<Lookup> {
    const floor = await this.loadFloor()
    const checked = new Array<boolean>(items.length)
    /** ids at or below the floor: read from the store, each once */
    let ask: Set<string> | undefined
    for (let k = 0; k < items.length; k++) {
      const id = items[k].packetId
      checked[k] = !this.ids.has(id)
      if (checked[k] && id <= floor) (ask ??= new Set()).add(id)
    }
    const found = ask === undefined ? new Map<string, Where>() : await this.dedup.find([...ask])
    return { checked, found }
  }

  /**
   * A duplicate check: the seq of an already stored message id, if any.
   * Answered synchronously when memory or the lookup knows (the common case).
   */
  private seen (packetId: string, k: number, own: Promise<void>, looked: Lookup): Where | undefined | Promise<Where | undefined> {
    const known = this.ids.get(packetId)
    if (known !== undefined) {
      const done = known.done
      return done === undefined || done === own ? known : done.then(() => known)
    }
    if (looked.checked[k]) return looked.found.get(packetId)
    // queued by another append when looked up, settled since: ask the store
    return this.locate(packetId)
  }

  /** Append packets; resolves once all are durable, one result per item, in order. */
  async append (items: AppendItem[], opts: AppendOptions = {}): Promise<AppendResult[]> {
    // Sequence numbers are assigned under a lock, in call order, so packets
    // from one stream keep their order even while earlier batches are syncing.
    const prepared = this.lock.then(async () => await this.prepare(items, opts.latch ?? new Set(), opts.extra ?? []))
    this.lock = prepared.then(() => {}, () => {})
    const { results, write, touched, finish } = await prepared
    let durable = false
    try {
      await write
      durable = true
    } finally {
      finish(durable)
    }
    mark('inbox.durable')
    for (const [nodeId, seq] of touched) this.emit('append', nodeId, seq)
    return results
  }

  private lock: Promise<void> = Promise.resolve()

  private async prepare (items: AppendItem[], latch: Set<string>, extra: WriteOp[]): Promise<{ results: AppendResult[], write: Promise<void>, touched: Map<string, number>, finish: (durable: boolean) => void }> {
    const results: AppendResult[] = []
    const ops: WriteOp[] = [...extra]
    const touched = new Map<string, number>()
    const now = Date.now()
    let release!: () => void
    const done = new Promise<void>((resolve) => { release = resolve })
    const mine: string[] = []
    const staged: Known[] = []
    const fresh: Fresh[] = []
    /** the first seq this append gave each node (a failed write gives them back) */
    const firsts = new Map<string, number>()
    const looked = await this.lookup(items)
    for (let k = 0; k < items.length; k++) {
      const item = items[k]
      const check = this.seen(item.packetId, k, done, looked)
      const prior = check instanceof Promise ? await check : check
      if (prior !== undefined) { results.push({ seq: prior.seq, duplicate: true }); continue }
      const stale = this.staleness(item.packetId, now)
      if (stale !== undefined) { results.push({ error: stale }); continue }
      const st = this.state.get(item.nodeId) ?? await this.loadState(item.nodeId)
      if (latch.has(item.nodeId) || st.last - st.cursor >= this.cap) {
        // once a node's inbox refused a packet, later ones for it in the same
        // stream are refused too, so a retry cannot overtake them (FIFO)
        latch.add(item.nodeId)
        results.push({ error: new InboxFullError(`inbox of ${item.nodeId} is full (${this.cap} unacknowledged packets)`) })
        continue
      }
      const seq = ++st.last
      if (!firsts.has(item.nodeId)) firsts.set(item.nodeId, seq)
      staged.push(this.ids.stage(item.packetId, item.nodeId, seq, done))
      mine.push(item.packetId)
      const value = inboxValueOf(item.packet, item.value, now)
      ops.push({ type: 'put', key: seqKey(item.nodeId, seq), value, split: ENTRY_HEADER })
      if (this.tails.watched(item.nodeId)) fresh.push({ nodeId: item.nodeId, entry: { seq, packet: value.subarray(ENTRY_HEADER), received: now } })
      ops.push({ type: 'put', key: this.dedup.key(item.packetId), value: this.dedupValues.encode(item.nodeId, seq) })
      touched.set(item.nodeId, seq)
      results.push({ seq, duplicate: false })
    }
    const write = ops.length > 0 ? this.committer.write(ops) : Promise.resolve()
    const finish = (durable: boolean): void => {
      this.ids.settle(mine, staged, durable)
      if (durable) for (const f of fresh) this.tails.keep(f.nodeId, f.entry)
      else this.giveBack(firsts, touched)
      release()
    }
    return { results, write, touched, finish }
  }

  /**
   * A write that failed gives its seqs back, so the inbox stays gap-free,
   * unless a later append already took seqs after them (then the gap stays:
   * readers go by key, and nothing was acknowledged with those seqs).
   */
  private giveBack (firsts: Map<string, number>, lasts: Map<string, number>): void {
    for (const [nodeId, first] of firsts) {
      const st = this.state.get(nodeId)
      if (st !== undefined && st.last === lasts.get(nodeId)) st.last = first - 1
    }
  }

  /** A follower of `nodeId` is attached: its newest durable entries are kept in memory (inbox-tails.ts). Returns the detach. */
  watch (nodeId: string): () => void {
    return this.tails.watch(nodeId)
  }

  /**
   * Entries after seq `after`, oldest first: at most `limit`, and no more once
   * their stored bytes reach `maxBytes` (always at least one entry), so a page
   * of large packets stays bounded in memory. Read again after the last seq.
   */
  async read (nodeId: string, after: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): Promise<InboxEntry[]> {
    const cached = this.tails.read(nodeId, after, limit)
    if (cached !== undefined) return cached
    const out: InboxEntry[] = []
    let bytes = 0
    for await (const [key, stored] of scan(this.db, `${INBOX_PREFIX}${nodeId}!`, { after: seqKey(nodeId, after), limit })) {
      // a separated value read back from the value log; gone: deleted since the read began
      const value = plainOrGone(stored, this.valueLog)
      if (value === undefined) continue
      const v = decodeInboxValue(value)
      out.push({ seq: seqFromKey(key), packet: v.p, received: v.r })
      bytes += value.byteLength
      if (bytes >= maxBytes) break
    }
    return out
  }

  /** read's entries as their stored values (inbox-stored.ts: no per-entry object; read is its reference). */
  async readStored (nodeId: string, after: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): Promise<StoredPage> {
    const cached = this.tails.read(nodeId, after, limit)
    return cached !== undefined ? storedPageOf(cached) : await readStoredPage(this.db, nodeId, after, limit, maxBytes, this.valueLog)
  }

  /** readStored's entries handed to `each` one at a time as read (inbox-stored.ts); stops when it returns false; whether all were taken. */
  async eachStored (nodeId: string, after: number, limit: number, maxBytes: number, each: (seq: number, value: Uint8Array) => boolean): Promise<boolean> {
    return await eachStored(this.db, this.tails, nodeId, after, limit, maxBytes, this.valueLog, each)
  }

  /** Where a stored message id is (durable entries only, within the dedup window). */
  async locate (packetId: string): Promise<Where | undefined> {
    return (await this.dedup.find([packetId])).get(packetId)
  }

  /** The entry of message `packetId` in the inbox of `nodeId`, while it is retained there. */
  async entryById (nodeId: string, packetId: string): Promise<InboxEntry | undefined> {
    const where = await this.locate(packetId)
    if (where?.nodeId !== nodeId) return undefined
    const [entry] = await this.read(nodeId, where.seq - 1, 1)
    return entry?.seq === where.seq ? entry : undefined
  }

  /** The receive time of the node's newest stored entry, if any (one reverse key read). */
  async lastReceived (nodeId: string): Promise<number | undefined> {
    for await (const [, value] of scan(this.db, `${INBOX_PREFIX}${nodeId}!`, { reverse: true, limit: 1 })) return receivedOf(value)
    return undefined
  }

  /** `node rm`: delete every entry and the cursor of a node; its message ids expire with the dedup window. */
  async dropNode (nodeId: string): Promise<number> {
    let total = 0
    for (;;) {
      const ops: WriteOp[] = []
      for await (const [key] of scan(this.db, `${INBOX_PREFIX}${nodeId}!`, { limit: PRUNE_CHUNK })) ops.push({ type: 'del', key })
      const last = ops.length < PRUNE_CHUNK
      if (last) ops.push({ type: 'del', key: CURSOR_PREFIX + nodeId })
      await this.committer.write(ops)
      total += last ? ops.length - 1 : ops.length
      if (last) break
    }
    this.state.delete(nodeId)
    this.tails.reset(nodeId)
    return total
  }

  /** Move the durable cursor forward (never backward), with `extra` ops in the same batch. Returns the cursor. */
  async ack (nodeId: string, seq: number, extra: WriteOp[] = []): Promise<number> {
    const st = await this.loadState(nodeId)
    const target = Math.min(seq, st.last)
    if (target <= st.cursor) {
      if (extra.length > 0) await this.committer.write(extra)
      return st.cursor
    }
    const before = st.cursor
    st.cursor = target
    try {
      await this.committer.write([...extra, { type: 'put', key: CURSOR_PREFIX + nodeId, value: toJsonBytes(target) }])
    } catch (err) {
      // not durable: the consumer acks again (a later ack that did land is kept)
      if (st.cursor === target) st.cursor = before
      throw err
    }
    this.emit('ack', nodeId, target)
    return target
  }

  /** A packet id older than the dedup window cannot be checked for duplicates: refuse it. */
  private staleness (packetId: string, now: number): StalePacketError | undefined {
    const minted = ulidTime(packetId)
    if (!Number.isFinite(minted) || minted >= now - this.dedupWindow) return undefined
    return new StalePacketError(`message ${packetId} is older than the receiver's dedup window (${this.dedupWindow} ms): refused, it may be a replay`)
  }

  /**
   * Retention: delete acked entries received before `olderThan`, and acked
   * entries beyond the newest `keepAcked` per node. Unacked entries are never
   * deleted. Works in chunks until done; returns how many went.
   */
  async prune (nodeId: string, olderThan: number, keepAcked: number): Promise<number> {
    const st = await this.loadState(nodeId)
    const keepFrom = st.cursor - keepAcked
    let total = 0
    for (;;) {
      const ops: WriteOp[] = []
      for await (const [key, value] of scan(this.db, `${INBOX_PREFIX}${nodeId}!`, { limit: PRUNE_CHUNK })) {
        const seq = seqFromKey(key)
        if (seq > st.cursor) break
        const received = receivedOf(value)
        if (seq > keepFrom && received >= olderThan) break
        ops.push({ type: 'del', key })
      }
      // unsynced: a deletion lost in a crash leaves acked entries to be pruned again
      if (ops.length > 0) { this.tails.reset(nodeId); await this.committer.writeUnsynced(ops) }
      total += ops.length
      if (ops.length < PRUNE_CHUNK) return total
    }
  }

  /**
   * Forget message ids minted (ULID time) before `now - dedupWindow`. Packets
   * that old are refused as stale on arrival, so dropping their ids can never
   * let a duplicate in. Works in chunks until done; returns how many went.
   */
  async pruneDedup (now = Date.now()): Promise<number> {
    return await this.dedup.prune(ulidTimePrefix(now - this.dedupWindow))
  }
}
