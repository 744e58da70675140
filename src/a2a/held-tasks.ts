// The face's writes of task records (a2a.task.commit, a2a.task.put), and what
// they leave the host holding. The face is the only writer of task records, so
// once the host answers that the record stored is the one the face gave
// (`held`), the face knows it without asking: the SDK's load of a task right
// after the face committed it, and its save of the same task unchanged, need
// no call into the host. Bounded; a task being written, or whose write failed
// or was refused, is asked of the host again. What is known is durable already
// (the host answers once the batch is synced).
import type { A2aTaskRow } from '../control/a2a-methods.js'
import type { ParamsOf, ResultOf } from '../control/methods.js'
import { BoundedIndex } from '../util/lru.js'
import type { HostCalls } from './in-process.js'

/** Task records known, at most. */
const HELD_TASKS = 4096

interface Held { owner: string, text: string }
type Row = Pick<A2aTaskRow, 'owner' | 'task'>

export class HeldTasks {
  /** null: not known (a write failed or was refused) */
  private readonly held = new BoundedIndex<Held | null>(HELD_TASKS)
  /** the latest write in flight per task */
  private readonly writing = new Map<string, object>()

  constructor (private readonly client: HostCalls) {}

  /** A task record: known, else from the host. */
  async get (node: string, taskId: string): Promise<Row | null> {
    const k = key(node, taskId)
    const hit = this.writing.has(k) ? undefined : this.held.get(k)
    if (hit != null) return { owner: hit.owner, task: JSON.parse(hit.text) as Record<string, unknown> }
    return await this.client.call('a2a.task.get', { node, task_id: taskId })
  }

  /**
   * The events, packets and record of a task in one durable batch
   * (a2a.task.commit). The params are handed over to the host (`give`): the
   * record's task is parsed from `text` here, for the host alone; the event
   * the host only writes.
   */
  async commit (p: Omit<ParamsOf<'a2a.task.commit'>, 'record'>, owner: string, text: string): Promise<ResultOf<'a2a.task.commit'>> {
    const params = { ...p, record: { owner, task: JSON.parse(text) as Record<string, unknown> } }
    return await this.write(p.node, p.task_id, owner, text, async () => this.client.give !== undefined
      ? await this.client.give('a2a.task.commit', params)
      : await this.client.call('a2a.task.commit', params))
  }

  /** Store a task (a2a.task.put); nothing is asked of the host when it holds this record already. */
  async put (node: string, owner: string, taskId: string, task: Record<string, unknown>): Promise<void> {
    const k = key(node, taskId)
    const text = JSON.stringify(task)
    const hit = this.writing.has(k) ? undefined : this.held.get(k)
    if (hit != null && hit.owner === owner && hit.text === text) return
    await this.write(node, taskId, owner, text, async () => await this.client.call('a2a.task.put', { node, owner, task_id: taskId, task }))
  }

  private async write<R extends { held: boolean }> (node: string, taskId: string, owner: string, text: string, call: () => Promise<R>): Promise<R> {
    const k = key(node, taskId)
    const token = {}
    this.writing.set(k, token)
    let known: Held | null = null
    try {
      const r = await call()
      if (r.held) known = { owner, text }
      return r
    } finally {
      if (this.writing.get(k) === token) {
        this.writing.delete(k)
        this.held.set(k, known)
      }
    }
  }
}

function key (node: string, taskId: string): string {
  return `${node}\u0000${taskId}`
}
