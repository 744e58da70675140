// The AgentExecutor of one node: an A2A message becomes a packet from the
// caller's client node into the node's inbox (SPAWN when it starts a task,
// MESSAGE when it continues one), through the daemon's ordinary `send` — the
// ACL decides as for any send. The execution then waits for the node's answer
// (the follower, follower.ts, turns it into task events).
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk'
import type { AgentExecutionEvent, AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server'
import type { HostCalls } from './in-process.js'
import { errorMessage } from '../util/errors.js'
import { A2aCaller } from './caller.js'
import { META_KEY } from './constants.js'
import type { TaskJournal } from './journal.js'
import { messageText, textPart } from './mapping.js'

/** The packet id the face last received for a task (its status message's metadata): a continuation answers it. */
function lastPacketOf (task: Task | undefined): string | undefined {
  const meta = task?.status?.message?.metadata?.[META_KEY] as { packet?: unknown } | undefined
  return typeof meta?.packet === 'string' ? meta.packet : (task?.metadata?.[META_KEY] as { packet?: string } | undefined)?.packet
}

function taskEvent (ctx: RequestContext, state: TaskState, packet: string | undefined, status?: Message): AgentExecutionEvent & { kind: 'task' } {
  const prior = ctx.task
  return {
    kind: 'task',
    data: {
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: { state, message: status, timestamp: new Date().toISOString() },
      artifacts: prior?.artifacts ?? [],
      history: [...(prior?.history ?? []), ctx.userMessage],
      metadata: { ...(prior?.metadata ?? {}), [META_KEY]: { packet } }
    }
  }
}

/**
 * A new task: the SDK found no task for the message (it names none; one it
 * names but cannot load is refused before the executor), so its id is the
 * random UUID the SDK minted for this request and no record of it exists.
 */
function isNew (ctx: RequestContext): boolean {
  return ctx.task === undefined
}

export class NodeExecutor implements AgentExecutor {
  constructor (private readonly client: HostCalls, private readonly journal: TaskJournal, private readonly node: string, private readonly follow: (client: string) => void) {}

  async execute (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const caller = ctx.context.user
    if (!(caller instanceof A2aCaller)) throw new Error('unauthenticated call reached the executor')
    this.follow(caller.name)
    let sent: string
    try {
      sent = await this.send(ctx, caller)
    } catch (err) {
      const why: Message = {
        messageId: `refused-${ctx.taskId}-${ctx.userMessage.messageId}`,
        contextId: ctx.contextId,
        taskId: ctx.taskId,
        role: Role.ROLE_AGENT,
        parts: [textPart(`refused: ${errorMessage(err)}`)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: []
      }
      await this.journal.open(this.node, caller.nodeId, taskEvent(ctx, TaskState.TASK_STATE_REJECTED, undefined, why), { packets: [], fresh: isNew(ctx) }, bus)
      return
    }
    const waiting = this.journal.wait(ctx.taskId, bus)
    await this.journal.open(this.node, caller.nodeId, taskEvent(ctx, TaskState.TASK_STATE_WORKING, sent), { packets: [sent], context: ctx.contextId, fresh: isNew(ctx) }, bus)
    await waiting
  }

  /** The packet: SPAWN for a new task, MESSAGE answering the node's last packet for a continued one. */
  private async send (ctx: RequestContext, caller: A2aCaller): Promise<string> {
    const text = messageText(ctx.userMessage)
    const inReplyTo = lastPacketOf(ctx.task)
    const base = { as: caller.name, to: this.node, conversation_id: ctx.contextId, requires_reply: true }
    const r = ctx.task === undefined
      ? await this.client.call('send', { ...base, signal: 'SPAWN', payload: { context: text } })
      : await this.client.call('send', { ...base, signal: 'MESSAGE', payload: { text }, ...(inReplyTo === undefined ? {} : { in_reply_to: inReplyTo }) })
    return r.id
  }

  async cancelTask (taskId: string, bus: ExecutionEventBus): Promise<void> {
    const row = await this.client.call('a2a.task.get', { node: this.node, task_id: taskId })
    const contextId = typeof row?.task.contextId === 'string' ? row.task.contextId : ''
    const event: AgentExecutionEvent = {
      kind: 'statusUpdate',
      data: { taskId, contextId, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }
    }
    await this.journal.emit(this.node, row?.owner ?? '', taskId, [event], bus)
    this.journal.release(taskId)
  }
}
