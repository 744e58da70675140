// A task's events: each one appended to the task's durable history (its seq is
// the SSE event id of the resume extension), published on the live execution's
// bus when one waits, else applied to the stored task; resume subscribers hear
// each event after it is durable.
import { EventEmitter } from 'node:events'
import { StreamResponse, Task } from '@a2a-js/sdk'
import type { AgentExecutionEvent, ExecutionEventBus } from '@a2a-js/sdk/server'
import { HeldTasks } from './held-tasks.js'
import type { HostCalls } from './in-process.js'
import { endsTurn, stateOf } from './mapping.js'

interface Live { bus: ExecutionEventBus, done: () => void }

/** The proto-JSON StreamResponse of an event. */
export function streamJson (e: AgentExecutionEvent): Record<string, unknown> {
  return StreamResponse.toJSON({ payload: { $case: e.kind, value: e.data } } as StreamResponse) as Record<string, unknown>
}

export interface JournalEvent { seq: number, event: Record<string, unknown> }

export class TaskJournal {
  private readonly live = new Map<string, Live>()
  private readonly heard = new EventEmitter()
  /** every task record the face writes goes through here (the SDK's task store too) */
  readonly tasks: HeldTasks

  constructor (private readonly client: HostCalls) {
    this.heard.setMaxListeners(0)
    this.tasks = new HeldTasks(client)
  }

  /** An execution waits on this bus until the task's turn ends (resolves then). */
  async wait (taskId: string, bus: ExecutionEventBus): Promise<void> {
    await new Promise<void>((resolve) => {
      this.live.get(taskId)?.done()
      this.live.set(taskId, { bus, done: resolve })
    })
  }

  /** End a waiting execution (cancel, or its turn ended). */
  release (taskId: string): void {
    const l = this.live.get(taskId)
    this.live.delete(taskId)
    l?.done()
  }

  isLive (taskId: string): boolean { return this.live.has(taskId) }

  /** Record events of a task, in order: durable history, then the live bus or the stored task. */
  async emit (node: string, owner: string, taskId: string, events: AgentExecutionEvent[], bus?: ExecutionEventBus): Promise<void> {
    const target = bus ?? this.live.get(taskId)?.bus
    for (const e of events) {
      const event = streamJson(e)
      const { seq } = await this.client.call('a2a.event.append', { task_id: taskId, event })
      if (target !== undefined) target.publish(e)
      else await this.applyStored(node, owner, taskId, e)
      this.heard.emit(taskId, { seq, event } satisfies JournalEvent)
      if (bus === undefined && endsTurn(stateOf(e))) this.release(taskId)
    }
  }

  /**
   * A task event of an execution (the face's answer to a message): the task
   * stored, the event appended and the packets indexed to the task, in one
   * durable batch; then published on the execution's bus. The SDK's own save
   * of the same task that follows writes nothing (it is stored so already).
   */
  async open (node: string, owner: string, e: AgentExecutionEvent & { kind: 'task' }, links: { packets: string[], context?: string, fresh: boolean }, bus: ExecutionEventBus): Promise<void> {
    const event = streamJson(e)
    const { seq } = await this.tasks.commit({ node, task_id: e.data.id, ...links, event }, owner, JSON.stringify(Task.toJSON(e.data)))
    bus.publish(e)
    if (seq !== null) this.heard.emit(e.data.id, { seq, event } satisfies JournalEvent)
  }

  /** No execution waits (a reply after a restart, or after a non-blocking send): change the stored task. */
  private async applyStored (node: string, owner: string, taskId: string, e: AgentExecutionEvent): Promise<void> {
    const row = await this.tasks.get(node, taskId)
    if (row === null) return
    const task = Task.fromJSON(row.task)
    if (e.kind === 'statusUpdate' && e.data.status !== undefined) {
      if (task.status?.message !== undefined) task.history.push(task.status.message)
      task.status = e.data.status
    } else if (e.kind === 'artifactUpdate' && e.data.artifact !== undefined) {
      task.artifacts = [...task.artifacts.filter((a) => a.artifactId !== e.data.artifact?.artifactId), e.data.artifact]
    } else if (e.kind === 'task') {
      Object.assign(task, e.data)
    }
    await this.tasks.put(node, row.owner, taskId, Task.toJSON(task) as Record<string, unknown>)
  }

  /** Hear a task's events as they become durable; returns the way to stop. */
  listen (taskId: string, onEvent: (e: JournalEvent) => void): () => void {
    this.heard.on(taskId, onEvent)
    return () => { this.heard.off(taskId, onEvent) }
  }
}
