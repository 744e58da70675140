// The agent's answers as packets in the sender's inbox, each written in one
// synced batch with the task record change it goes with (and, on
// acceptance, with the removal of the sent packet from the outbox).
import { TaskState, type Artifact, type Message, type StreamResponse, type Task, type TaskStatus } from '@a2a-js/sdk'
import { MAX_ID_FIELD } from '../packet/fields.js'
import { PacketCodec } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import type { A2aTaskStore, OpenA2aTask } from '../store/a2a-tasks.js'
import type { Committer, WriteOp } from '../store/db.js'
import type { InboxStore } from '../store/inbox.js'
import type { Logger } from '../util/log.js'
import { ulid } from '../util/ulid.js'
import { wellFormedDeep } from '../util/unicode.js'
import { finalAnswer, interruptAnswer, INTERRUPTED, messageAnswer, progressAnswer, TERMINAL, type Answer } from './a2a-mapping.js'

/** One event of a task (or a direct message), whatever shape it came in. */
export interface A2aUpdate {
  taskId: string
  contextId: string
  status?: TaskStatus
  /** the task's artifacts when the update is a whole Task */
  artifacts?: Artifact[]
  /** an artifact update event */
  artifact?: { artifact: Artifact, append: boolean }
  /** a direct Message answer (no task) */
  message?: Message
}

export function updateOfTask (t: Task): A2aUpdate {
  return { taskId: t.id, contextId: t.contextId, status: t.status, artifacts: t.artifacts }
}

/** The update an SDK result or stream event carries (undefined for an empty event). */
export function updateOf (r: StreamResponse | Message | Task): A2aUpdate | undefined {
  if ('messageId' in r) return { taskId: r.taskId, contextId: r.contextId, message: r }
  if ('id' in r && 'status' in r) return updateOfTask(r)
  const p = (r as StreamResponse).payload
  if (p === undefined) return undefined
  switch (p.$case) {
    case 'task': return updateOfTask(p.value)
    case 'message': return { taskId: p.value.taskId, contextId: p.value.contextId, message: p.value }
    case 'statusUpdate': return { taskId: p.value.taskId, contextId: p.value.contextId, status: p.value.status }
    case 'artifactUpdate': return p.value.artifact === undefined ? undefined : { taskId: p.value.taskId, contextId: p.value.contextId, artifact: { artifact: p.value.artifact, append: p.value.append } }
  }
}

/** Who asked and what: the sent packet an answer replies to. */
export interface AskContext {
  agent: { id: string, name: string }
  /** the sender node */
  from: string
  fromName?: string
  packetId: string
  contextId: string
}

export interface A2aAnswersComponents {
  committer: Committer
  inbox: Pick<InboxStore, 'append'>
  tasks: A2aTaskStore
  log: Logger
}

/** What one update changes: the answer packet (if any) and the task record ops, applied once durable. */
interface Step { answer?: Answer, ops: WriteOp[], applied: Array<() => void>, closed: boolean }

const fits = (s: string): boolean => s !== '' && s.length <= MAX_ID_FIELD

/** A TaskState by its name without the prefix (WORKING, INPUT_REQUIRED, …). */
export function stateName (s: TaskState): string {
  return (TaskState[s] ?? String(s)).replace(/^TASK_STATE_/, '')
}

function statusKey (status: TaskStatus): string {
  const id = status.message?.messageId
  return `${TaskState[status.state] ?? status.state}:${id !== undefined && id !== '' ? id : (status.timestamp ?? '')}`
}

export class A2aAnswers {
  private readonly codec = new PacketCodec()

  constructor (private readonly c: A2aAnswersComponents) {}

  /** The answer packet, from the agent to the sender, replying to the packet that asked. */
  packet (ask: AskContext, answer: Answer, taskId: string): Packet {
    const p: Packet = {
      id: ulid(),
      from: ask.agent.id,
      to: ask.from,
      from_name: ask.agent.name,
      signal: answer.signal,
      scope: { files: [], zone: 'project' },
      // the agent's words: a lone surrogate in them becomes U+FFFD (the packet would be refused, and the answer lost)
      payload: wellFormedDeep(answer.payload),
      ts: Date.now(),
      in_reply_to: ask.packetId
    }
    if (ask.fromName !== undefined) p.to_name = ask.fromName
    if (fits(ask.contextId)) p.conversation_id = ask.contextId
    if (fits(taskId)) p.session_id = taskId
    return p
  }

  /**
   * Work out what an update changes for `open` (the task's record, undefined
   * for a new task or a message); `changed`: the record was changed by the
   * caller (a continued task's latest packet) and is written in any case.
   */
  step (ask: AskContext, open: OpenA2aTask | undefined, u: A2aUpdate, artifacts: readonly Artifact[], changed = false): Step {
    if (u.message !== undefined && u.status === undefined) return { answer: messageAnswer(u.message), ops: [], applied: [], closed: true }
    const record: OpenA2aTask = open !== undefined ? { ...open } : { agent: ask.agent.id, taskId: u.taskId, contextId: u.contextId, from: ask.from, packetId: ask.packetId, seen: [], opened: Date.now(), state: 'SUBMITTED' }
    const status = u.status
    const fresh = open === undefined || changed
    if (status === undefined) return this.keep(record, fresh, undefined)
    record.state = stateName(status.state)
    if (TERMINAL.has(status.state)) {
      const gone = this.c.tasks.remove(record.agent, record.taskId)
      return { answer: finalAnswer(record.taskId, status, u.artifacts ?? artifacts), ops: [gone.op], applied: [gone.applied], closed: true }
    }
    if (INTERRUPTED.has(status.state)) {
      const key = statusKey(status)
      if (record.answered === key) return this.keep(record, fresh || open?.state !== record.state, undefined)
      record.answered = key
      delete record.replied
      return this.keep(record, true, interruptAnswer(record.taskId, status))
    }
    const answer = progressAnswer(status)
    const key = statusKey(status)
    if (answer === undefined || record.seen.includes(key)) return this.keep(record, fresh || open?.state !== record.state, undefined)
    record.seen = [...record.seen, key]
    return this.keep(record, true, answer)
  }

  private keep (record: OpenA2aTask, changed: boolean, answer: Answer | undefined): Step {
    if (!changed) return { answer, ops: [], applied: [], closed: false }
    const put = this.c.tasks.put(record)
    return { answer, ops: [put.op], applied: [put.applied], closed: false }
  }

  /** Write a step durably, with `extra` ops (the outbox removal) in the same batch. */
  async write (ask: AskContext, s: Step, taskId: string, extra: WriteOp[] = []): Promise<void> {
    const ops = [...extra, ...s.ops]
    if (s.answer === undefined) {
      if (ops.length > 0) await this.c.committer.write(ops)
    } else {
      const p = this.packet(ask, s.answer, taskId)
      const [r] = await this.c.inbox.append([{ nodeId: ask.from, packetId: p.id, packet: this.codec.encode(p) }], { extra: ops })
      if ('error' in r) this.c.log(`a2a answer from ${ask.agent.name} to ${ask.from} not stored: ${r.error.message}`)
    }
    for (const f of s.applied) f()
  }
}
