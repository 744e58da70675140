// Tasks that external A2A agents opened for messages sent to them, kept
// until their final answer is in the sender's inbox. Each change is written
// in the same batch as the answer it goes with (the caller hands the op to
// the inbox append), so a restart neither loses nor repeats an answer.
import { fromJsonBytes, scan, toJsonBytes, type RawDb, type WriteOp } from './db.js'
import { Bucket } from './schema.js'

const PREFIX = Bucket.a2aAgentTask

/** at most this many status message ids are remembered per task (answers already delivered) */
export const SEEN_LIMIT = 64

export interface OpenA2aTask {
  /** the a2a node (agent) id */
  agent: string
  taskId: string
  contextId: string
  /** the sender node, whose inbox gets the answers */
  from: string
  /** the latest packet sent into this task (answers reply to it) */
  packetId: string
  /** the last state seen (TaskState name without its prefix, e.g. WORKING, INPUT_REQUIRED) */
  state: string
  /** the last interrupted state answered (input-required, auth-required) with its status message id, so it is answered once */
  answered?: string
  /** the sender replied after the last interruption: the task is followed again (also after a restart) */
  replied?: boolean
  /** status message ids already delivered as packets (newest last, bounded) */
  seen: string[]
  opened: number
}

/** task ids come from the agent: escaped, so a `!` in one cannot reach into the key layout */
const keyOf = (agent: string, taskId: string): string => `${PREFIX}${agent}!${encodeURIComponent(taskId).replace(/!/g, '%21')}`

/** The open A2A tasks of this host, in memory after `load`. */
export class A2aTaskStore {
  private readonly tasks = new Map<string, OpenA2aTask>()

  constructor (private readonly db: RawDb) {}

  async load (): Promise<void> {
    for await (const [key, value] of scan(this.db, PREFIX)) this.tasks.set(key, fromJsonBytes<OpenA2aTask>(value))
  }

  get (agent: string, taskId: string): OpenA2aTask | undefined {
    return this.tasks.get(keyOf(agent, taskId))
  }

  /** every open task of one agent */
  ofAgent (agent: string): OpenA2aTask[] {
    return [...this.tasks.values()].filter((t) => t.agent === agent)
  }

  all (): OpenA2aTask[] { return [...this.tasks.values()] }

  count (): number { return this.tasks.size }

  /** The op that stores `task`; `applied` makes it visible here once the batch is durable. */
  put (task: OpenA2aTask): { op: WriteOp, applied: () => void } {
    const key = keyOf(task.agent, task.taskId)
    const copy = { ...task, seen: task.seen.slice(-SEEN_LIMIT) }
    return { op: { type: 'put', key, value: toJsonBytes(copy) }, applied: () => { this.tasks.set(key, copy) } }
  }

  /** The op that forgets a task (its final answer is delivered). */
  remove (agent: string, taskId: string): { op: WriteOp, applied: () => void } {
    const key = keyOf(agent, taskId)
    return { op: { type: 'del', key }, applied: () => { this.tasks.delete(key) } }
  }

  /** ops that forget every task of an agent (the node is removed) */
  dropAgent (agent: string): { ops: WriteOp[], applied: () => void } {
    const keys = [...this.tasks.entries()].filter(([, t]) => t.agent === agent).map(([k]) => k)
    return { ops: keys.map((key) => ({ type: 'del', key })), applied: () => { for (const k of keys) this.tasks.delete(k) } }
  }
}
