// The A2A face's durable records (issue 13): tasks and their event history,
// the packet → task and context → task indexes, and client credentials. Values
// are JSON; a task is the A2A proto-JSON Task the face hands over, kept opaque.
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

const SEQ_WIDTH = 12
const hex = (n: number): string => n.toString(16).padStart(SEQ_WIDTH, '0')

export class A2aRecords {
  /** the last event seq of each task seen in this process (appends are serialised per task) */
  private readonly lastSeq = new Map<string, number>()
  private readonly appending = new Map<string, Promise<unknown>>()

  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  private async getJson<T> (key: string): Promise<T | undefined> {
    const v = await this.db.get(key)
    return v === undefined ? undefined : fromJsonBytes<T>(v)
  }

  async putTask (node: string, id: string, rec: A2aTaskRecord): Promise<void> {
    await this.committer.write([{ type: 'put', key: `${Bucket.a2aTask}${node}!${id}`, value: toJsonBytes(rec) }])
  }

  /** Index packets (and the context) to a task. */
  async link (node: string, id: string, packets: readonly string[], context?: string): Promise<void> {
    const ref = toJsonBytes({ node, task: id } satisfies A2aTaskRef)
    const ops: WriteOp[] = packets.map((p) => ({ type: 'put' as const, key: Bucket.a2aPacket + p, value: ref }))
    if (context !== undefined) ops.push({ type: 'put', key: Bucket.a2aContext + context, value: ref })
    if (ops.length > 0) await this.committer.write(ops)
  }

  async getTask (node: string, id: string): Promise<A2aTaskRecord | undefined> {
    return await this.getJson<A2aTaskRecord>(`${Bucket.a2aTask}${node}!${id}`)
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
    const before = this.appending.get(task) ?? Promise.resolve()
    const next = before.catch(() => {}).then(async () => {
      const seq = (await this.seqOf(task)) + 1
      await this.committer.write([{ type: 'put', key: `${Bucket.a2aEvent}${task}!${hex(seq)}`, value: toJsonBytes(event) }])
      this.lastSeq.set(task, seq)
      return seq
    })
    this.appending.set(task, next)
    try {
      return await next
    } finally {
      if (this.appending.get(task) === next) this.appending.delete(task)
    }
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
  }

  async clientNames (): Promise<string[]> {
    const names = new Set<string>()
    for await (const [, v] of scan(this.db, Bucket.a2aCredential)) names.add(fromJsonBytes<A2aCredential>(v).name)
    return [...names]
  }

  async credential (hash: string): Promise<A2aCredential | undefined> {
    return await this.getJson<A2aCredential>(Bucket.a2aCredential + hash)
  }
}
