import { EventEmitter } from 'node:events'
import { Serial } from '../util/serial.js'
import { fromJsonBytes, scan, toJsonBytes, type Committer, type RawDb, type WriteOp } from './db.js'
import type { InboxStore } from './inbox.js'
import { Bucket } from './schema.js'

// What a node's sessions did with its inbox: which messages were pushed to an
// attachment (a channel notification written), which were read (handled), and
// when a session last attached and read. Only reading moves the cursor: the
// cursor is the end of the read prefix; a message read out of order (a reply,
// an ack by id) keeps a read mark above the cursor until the gap closes.

const READ_PREFIX = Bucket.readMark
const PUSH_PREFIX = Bucket.pushMark
const PRESENCE_PREFIX = Bucket.presence
/** marks deleted per step when a node is removed */
const DROP_CHUNK = 5000

export interface ReadMark { at: number, by: string }
export interface PushMark { att: string, at: number, n: number }
export interface Presence { last_read?: number, last_attach?: number }

/** What to mark read: everything up to a seq, and/or single seqs. */
export interface ReadRequest { upto?: number, seqs?: number[] }
export interface ReadOutcome { cursor: number, /** seqs that became read by this call, ascending */ read: number[] }

function markKey (prefix: string, nodeId: string, seq: number): string {
  return `${prefix}${nodeId}!${seq.toString(16).padStart(12, '0')}`
}

function seqOf (key: string): number {
  return parseInt(key.slice(key.lastIndexOf('!') + 1), 16)
}

/** Emits 'pushed' (nodeId, seqs pushed for the first time) and 'read' (nodeId, seqs newly read), once stored. */
export class ConsumptionStore extends EventEmitter {
  /** read-modify-write of marks and histories, one at a time */
  private readonly serialized = new Serial()
  private readonly presenceCache = new Map<string, Presence>()
  /** sessions attached now, per node (in memory: an attachment ends with its process) */
  private readonly live = new Map<string, number>()

  constructor (private readonly db: RawDb, private readonly committer: Committer, private readonly inbox: InboxStore) {
    super()
    this.setMaxListeners(0)
  }

  /** Record that `seqs` were written to attachment `att` (one batch, the group commit's fsync). */
  async markPushed (nodeId: string, seqs: number[], att: string, now = Date.now()): Promise<void> {
    if (seqs.length === 0) return
    const prior = await this.db.getMany(seqs.map((s) => markKey(PUSH_PREFIX, nodeId, s)))
    const ops: WriteOp[] = seqs.map((seq, k) => {
      const before = prior[k] === undefined ? undefined : fromJsonBytes<PushMark>(prior[k] as Uint8Array)
      return { type: 'put', key: markKey(PUSH_PREFIX, nodeId, seq), value: toJsonBytes({ att, at: now, n: (before?.n ?? 0) + 1 }) }
    })
    await this.committer.write(ops)
    const first = seqs.filter((_, k) => prior[k] === undefined)
    if (first.length > 0) this.emit('pushed', nodeId, first)
  }

  async pushMark (nodeId: string, seq: number): Promise<PushMark | undefined> {
    const v = await this.db.get(markKey(PUSH_PREFIX, nodeId, seq))
    return v === undefined ? undefined : fromJsonBytes<PushMark>(v)
  }

  /** Seqs above the cursor already read out of order. */
  async readAbove (nodeId: string): Promise<Set<number>> {
    const { cursor } = await this.inbox.info(nodeId)
    const out = new Set<number>()
    for await (const [key] of scan(this.db, `${READ_PREFIX}${nodeId}!`, { after: markKey(READ_PREFIX, nodeId, cursor) })) out.add(seqOf(key))
    return out
  }

  /** Messages delivered and not read. */
  async unread (nodeId: string): Promise<number> {
    const info = await this.inbox.info(nodeId)
    return info.last - info.cursor - (await this.readAbove(nodeId)).size
  }

  async isRead (nodeId: string, seq: number): Promise<boolean> {
    const { cursor } = await this.inbox.info(nodeId)
    return seq <= cursor || await this.db.get(markKey(READ_PREFIX, nodeId, seq)) !== undefined
  }

  /**
   * Mark messages read: the cursor moves over the read prefix, marks stay for
   * reads past a gap. Marks, the cursor and the presence record go in one batch.
   */
  async markRead (nodeId: string, req: ReadRequest, by: string, now = Date.now()): Promise<ReadOutcome> {
    return await this.serialized.run(async () => {
      const info = await this.inbox.info(nodeId)
      const above = await this.readAbove(nodeId)
      const wanted = new Set<number>()
      const upto = Math.min(req.upto ?? 0, info.last)
      for (let s = info.cursor + 1; s <= upto; s++) wanted.add(s)
      for (const s of req.seqs ?? []) if (s > info.cursor && s <= info.last) wanted.add(s)
      const read = [...wanted].filter((s) => !above.has(s)).sort((x, y) => x - y)
      if (read.length === 0) return { cursor: info.cursor, read }
      const all = new Set([...above, ...read])
      let cursor = info.cursor
      while (all.has(cursor + 1)) cursor++
      const ops: WriteOp[] = []
      const mark = toJsonBytes({ at: now, by } satisfies ReadMark)
      for (const s of read) if (s > cursor) ops.push({ type: 'put', key: markKey(READ_PREFIX, nodeId, s), value: mark })
      for (const s of above) if (s <= cursor) ops.push({ type: 'del', key: markKey(READ_PREFIX, nodeId, s) })
      ops.push(this.presenceOp(nodeId, { last_read: now }))
      const moved = await this.inbox.ack(nodeId, cursor, ops)
      this.emit('read', nodeId, read)
      return { cursor: moved, read }
    })
  }

  /** A session attached to the node now. */
  async attached (nodeId: string, now = Date.now()): Promise<void> {
    await this.serialized.run(async () => {
      await this.presence(nodeId)
      await this.committer.write([this.presenceOp(nodeId, { last_attach: now })])
    })
  }

  private presenceOp (nodeId: string, change: Presence): WriteOp {
    const next = { ...this.presenceCache.get(nodeId), ...change }
    this.presenceCache.set(nodeId, next)
    return { type: 'put', key: PRESENCE_PREFIX + nodeId, value: toJsonBytes(next) }
  }

  async presence (nodeId: string): Promise<Presence> {
    const cached = this.presenceCache.get(nodeId)
    if (cached !== undefined) return cached
    const v = await this.db.get(PRESENCE_PREFIX + nodeId)
    const p = v === undefined ? {} : fromJsonBytes<Presence>(v)
    this.presenceCache.set(nodeId, { ...p, ...this.presenceCache.get(nodeId) })
    return p
  }

  /** A session attached (+1) or went away (-1). */
  attach (nodeId: string, delta: 1 | -1): void {
    const n = (this.live.get(nodeId) ?? 0) + delta
    if (n > 0) this.live.set(nodeId, n)
    else this.live.delete(nodeId)
  }

  attachedNow (nodeId: string): number {
    return this.live.get(nodeId) ?? 0
  }

  /** Presence from memory (after `warm`): sessions attached now, when one last read and attached. */
  sessionNow (nodeId: string): { attached: number, last_read?: string, last_attach?: string } {
    const p = this.presenceCache.get(nodeId) ?? {}
    const iso = (t: number | undefined): string | undefined => t === undefined ? undefined : new Date(t).toISOString()
    return { attached: this.attachedNow(nodeId), last_read: iso(p.last_read), last_attach: iso(p.last_attach) }
  }

  /** Load the presence records of these nodes into memory. */
  async warm (nodeIds: string[]): Promise<void> {
    for (const id of nodeIds) await this.presence(id)
  }

  /** `node rm`: forget the node's marks and presence. */
  async dropNode (nodeId: string): Promise<void> {
    for (const prefix of [READ_PREFIX, PUSH_PREFIX]) {
      for (;;) {
        const ops: WriteOp[] = []
        for await (const [key] of scan(this.db, `${prefix}${nodeId}!`, { limit: DROP_CHUNK })) ops.push({ type: 'del', key })
        if (ops.length > 0) await this.committer.write(ops)
        if (ops.length < DROP_CHUNK) break
      }
    }
    await this.committer.write([{ type: 'del', key: PRESENCE_PREFIX + nodeId }])
    this.presenceCache.delete(nodeId)
  }
}
