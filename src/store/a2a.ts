// The A2A face's durable records (issue 13): tasks and their event history,
// the packet → task and context → task indexes, and client credentials. Values
// are JSON; a task is the A2A proto-JSON Task the face hands over, kept opaque.
//
// This process is the only writer of these keys, so what it wrote last is kept
// in memory (bounded): the tasks written lately (with their JSON text, so a put
// of the same task unchanged writes nothing), the last event seq of each task,
// and the credentials read (never changed once written). Everything in memory
// is durable already: an entry is set once its batch is written and synced.
// The writes of one task (record and events) are serialised, so the memory
// matches the store when each one is decided.
import { BoundedIndex } from '../util/lru.js'
import { fromJsonBytes, scan, toJsonBytes, type Committer, type RawDb, type WriteOp } from './db.js'
import { Bucket } from './schema.js'

export interface A2aTaskRecord {
  /** the A2A caller (client node id) the task belongs to */
  owner: string
  /** the proto-JSON A2A Task */
  task: Record<string, unknown>
  /** ms */
  updated: number
}

export interface A2aTaskRef { node: string, task: string }

export interface A2aCredential {
  /** the client node's name and id on this host */
  name: string
  node_id: string
  /** the grant that lets the client send (issued by `grantor`) */
  token_id: string
  grantor: string
  grantor_id: string
  created: number
  /** ms */
  expires: number
}

/** One durable batch for a task (A2aRecords.commit): any of its parts. */
export interface A2aTaskCommit {
  node: string
  task_id: string
  /** packets (and the context) to index to the task */
  packets?: readonly string[]
  context?: string
  /** the task, stored unless another caller owns its id (or it is stored so already) */
  record?: { owner: string, task: Record<string, unknown> }
  /** an event appended to the task's history */
  event?: unknown
  /**
   * the task id was minted for this commit (the SDK's random UUID for a new
   * task): no record of it can exist, so the store is not read for one
   */
  fresh?: boolean
}

/** What a commit did: the event's seq; whether the task was written; whether the record stored now is the one given. */
export interface A2aCommitResult { seq: number | undefined, stored: boolean, held: boolean }

const SEQ_WIDTH = 12
const hex = (n: number): string => n.toString(16).padStart(SEQ_WIDTH, '0')
/** tasks, last seqs and credentials kept in memory, each */
export const A2A_RECORDS_CACHED = 4096

interface KnownTask { rec: A2aTaskRecord, text: string }

export class A2aRecords {
  /** the last event seq of tasks written lately */
  private readonly lastSeq = new BoundedIndex<number>(A2A_RECORDS_CACHED)
  /** tasks written lately, by record key */
  private readonly tasks = new BoundedIndex<KnownTask>(A2A_RECORDS_CACHED)
  private readonly credentials = new BoundedIndex<A2aCredential>(A2A_RECORDS_CACHED)
  /** the write in progress of each task (its record and events are written one after another) */
  private readonly writing = new Map<string, Promise<unknown>>()

  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  private async getJson<T> (key: string): Promise<T | undefined> {
    const v = await this.db.get(key)
    return v === undefined ? undefined : fromJsonBytes<T>(v)
  }

  /** Run `fn` after the task's writes before it. */
  private async serial<T> (task: string, fn: () => Promise<T>): Promise<T> {
    const before = this.writing.get(task) ?? Promise.resolve()
    const next = before.catch(() => {}).then(fn)
    this.writing.set(task, next)
    try {
      return await next
    } finally {
      if (this.writing.get(task) === next) this.writing.delete(task)
    }
  }

  /** Store a task unless another caller owns its id; true when the record stored now is this one. */
  async putTask (node: string, id: string, rec: A2aTaskRecord): Promise<boolean> {
    return (await this.commit({ node, task_id: id, record: rec })).held
  }

  /** Index packets (and the context) to a task. */
  async link (node: string, id: string, packets: readonly string[], context?: string): Promise<void> {
    const ops = linkOps(node, id, packets, context)
    if (ops.length > 0) await this.committer.write(ops)
  }

  /**
   * In one durable batch: packets (and the context) indexed to the task, the
   * task stored (not when another caller owns its id, nor when it is stored
   * so already), an event appended. Resolves once durable: the event's seq,
   * whether the task was written, and whether the record stored is the one given.
   */
  async commit (c: A2aTaskCommit): Promise<A2aCommitResult> {
    return await this.serial(c.task_id, async () => {
      const ops = linkOps(c.node, c.task_id, c.packets ?? [], c.context)
      const key = `${Bucket.a2aTask}${c.node}!${c.task_id}`
      const prior = c.fresh === true ? this.tasks.get(key) : c.record !== undefined || c.event !== undefined ? await this.known(key) : undefined
      let stored: KnownTask | undefined
      let held = false
      if (c.record !== undefined && (prior === undefined || prior.rec.owner === c.record.owner)) {
        const text = JSON.stringify(c.record.task)
        held = true
        if (prior?.text !== text) {
          stored = { rec: { owner: c.record.owner, task: c.record.task, updated: Date.now() }, text }
          ops.push({ type: 'put', key, value: toJsonBytes(stored.rec) })
        }
      }
      let seq: number | undefined
      if (c.event !== undefined) {
        // a task written here first has no events yet: the face writes a new task's first event with it
        const fresh = prior === undefined && stored !== undefined
        seq = (this.lastSeq.get(c.task_id) ?? (fresh ? 0 : await this.seqOf(c.task_id))) + 1
        ops.push({ type: 'put', key: `${Bucket.a2aEvent}${c.task_id}!${hex(seq)}`, value: toJsonBytes(c.event) })
      }
      if (ops.length > 0) await this.committer.write(ops)
      if (stored !== undefined) this.tasks.set(key, stored)
      if (seq !== undefined) this.lastSeq.set(c.task_id, seq)
      return { seq, stored: stored !== undefined, held }
    })
  }

  /** A task record with its JSON text: from memory, else the store. */
  private async known (key: string): Promise<KnownTask | undefined> {
    const hit = this.tasks.get(key)
    if (hit !== undefined) return hit
    const rec = await this.getJson<A2aTaskRecord>(key)
    return rec === undefined ? undefined : { rec, text: JSON.stringify(rec.task) }
  }

  async getTask (node: string, id: string): Promise<A2aTaskRecord | undefined> {
    const key = `${Bucket.a2aTask}${node}!${id}`
    return this.tasks.get(key)?.rec ?? await this.getJson<A2aTaskRecord>(key)
  }

  async listTasks (node: string, owner: string, limit: number): Promise<A2aTaskRecord[]> {
    const out: A2aTaskRecord[] = []
    for await (const [, v] of scan(this.db, `${Bucket.a2aTask}${node}!`)) {
      const rec = fromJsonBytes<A2aTaskRecord>(v)
      if (rec.owner === owner) out.push(rec)
      if (out.length >= limit) break
    }
    return out
  }

  async taskOfPacket (packetId: string): Promise<A2aTaskRef | undefined> {
    return await this.getJson<A2aTaskRef>(Bucket.a2aPacket + packetId)
  }

  async taskOfContext (contextId: string): Promise<A2aTaskRef | undefined> {
    return await this.getJson<A2aTaskRef>(Bucket.a2aContext + contextId)
  }

  private async seqOf (task: string): Promise<number> {
    const known = this.lastSeq.get(task)
    if (known !== undefined) return known
    for await (const [key] of scan(this.db, `${Bucket.a2aEvent}${task}!`, { reverse: true, limit: 1 })) {
      return Number.parseInt(key.slice(key.lastIndexOf('!') + 1), 16)
    }
    return 0
  }

  /** Append an event to a task's history; resolves with its seq once durable. */
  async appendEvent (task: string, event: unknown): Promise<number> {
    return await this.serial(task, async () => {
      const seq = (await this.seqOf(task)) + 1
      await this.committer.write([{ type: 'put', key: `${Bucket.a2aEvent}${task}!${hex(seq)}`, value: toJsonBytes(event) }])
      this.lastSeq.set(task, seq)
      return seq
    })
  }

  async events (task: string, after: number, limit: number): Promise<Array<{ seq: number, event: unknown }>> {
    const out: Array<{ seq: number, event: unknown }> = []
    const prefix = `${Bucket.a2aEvent}${task}!`
    for await (const [key, v] of scan(this.db, prefix, { after: prefix + hex(after), limit })) {
      out.push({ seq: Number.parseInt(key.slice(prefix.length), 16), event: fromJsonBytes<unknown>(v) })
    }
    return out
  }

  async putCredential (hash: string, cred: A2aCredential): Promise<void> {
    await this.committer.write([{ type: 'put', key: Bucket.a2aCredential + hash, value: toJsonBytes(cred) }])
    this.credentials.set(hash, cred)
  }

  async clientNames (): Promise<string[]> {
    const names = new Set<string>()
    for await (const [, v] of scan(this.db, Bucket.a2aCredential)) names.add(fromJsonBytes<A2aCredential>(v).name)
    return [...names]
  }

  /** A credential (never changed once written, so kept in memory once read). */
  async credential (hash: string): Promise<A2aCredential | undefined> {
    const hit = this.credentials.get(hash)
    if (hit !== undefined) return hit
    const cred = await this.getJson<A2aCredential>(Bucket.a2aCredential + hash)
    if (cred !== undefined) this.credentials.set(hash, cred)
    return cred
  }
}

function linkOps (node: string, id: string, packets: readonly string[], context: string | undefined): WriteOp[] {
  if (packets.length === 0 && context === undefined) return []
  const ref = toJsonBytes({ node, task: id } satisfies A2aTaskRef)
  const ops: WriteOp[] = packets.map((p) => ({ type: 'put' as const, key: Bucket.a2aPacket + p, value: ref }))
  if (context !== undefined) ops.push({ type: 'put', key: Bucket.a2aContext + context, value: ref })
  return ops
}
