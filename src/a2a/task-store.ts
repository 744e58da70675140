// The SDK's TaskStore over the daemon's durable A2A task records (control
// methods a2a.task.*): tasks survive a daemon restart, and a caller sees only
// its own tasks.
import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk'
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server'
import type { HeldTasks } from './held-tasks.js'
import type { HostCalls } from './in-process.js'
import { ownerOf } from './caller.js'

export class ControlTaskStore implements TaskStore {
  /** `held`: the face's task writes, and the records they left the host holding (held-tasks.ts) */
  constructor (private readonly client: HostCalls, private readonly held: HeldTasks, private readonly node: string) {}

  /** A task id belongs to the caller that made it: the host never overwrites another caller's (a2a.task.put). */
  async save (task: Task, context: ServerCallContext): Promise<void> {
    await this.held.put(this.node, ownerOf(context.user), task.id, Task.toJSON(task) as Record<string, unknown>)
  }

  async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const row = await this.held.get(this.node, taskId)
    if (row === null || row.owner !== ownerOf(context.user)) return undefined
    return Task.fromJSON(row.task)
  }

  async list (params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const rows = await this.client.call('a2a.task.list', { node: this.node, owner: ownerOf(context.user) })
    const tasks = rows.map((r) => Task.fromJSON(r.task)).filter((t) =>
      (params.contextId === '' || t.contextId === params.contextId) &&
      (params.status === TaskState.TASK_STATE_UNSPECIFIED || t.status?.state === params.status))
    const pageSize = params.pageSize ?? tasks.length
    const page = pageSize > 0 ? tasks.slice(0, pageSize) : tasks
    return { tasks: page, nextPageToken: '', pageSize: page.length, totalSize: tasks.length }
  }
}
