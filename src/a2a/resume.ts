// amesh's resume extension (beyond A2A 1.0, which has none — a2aproject/A2A#1986).
// A SubscribeToTask that asks for it (the extension in A2A-Extensions, or a
// Last-Event-ID header) is served here rather than by the SDK, whose SSE writer
// gives events no ids: every event carries `id: <seq>` (its place in the task's
// durable history) and Last-Event-ID: k replays exactly the events after k,
// then follows live ones until the task ends. The replay waits for its reader
// (a history past the bound still reaches a client that reads); what the
// stream holds unread, written or heard meanwhile, is bounded by SSE_MAX_BUFFERED.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { HostCalls } from './in-process.js'
import { REPLAY_PAGE, RESUME_EXTENSION_URI } from './constants.js'
import { overBound } from './output-bound.js'
import { callerOf } from './caller.js'
import { bodyOf, RPC, sendError, type Binding } from './errors.js'
import type { JournalEvent, TaskJournal } from './journal.js'

const TERMINAL_STATES = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'])
const REST_SUBSCRIBE = /^\/tasks\/([^/]+):subscribe$/

/** A request header's value (node:http lower-cases the names and joins a repeated one). */
function header (req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v.join(', ') : v
}

function wantsResume (req: IncomingMessage): boolean {
  return header(req, 'last-event-id') !== undefined || (header(req, 'a2a-extensions') ?? '').split(',').map((s) => s.trim()).includes(RESUME_EXTENSION_URI)
}

/** The task a resumable subscribe names, or undefined when the request is something else. */
function subscribeTarget (req: IncomingMessage, binding: Binding): string | undefined {
  if (!wantsResume(req)) return undefined
  if (binding === 'rest') {
    // the path below the binding's mount (express has rewritten req.url to it)
    const m = REST_SUBSCRIBE.exec((req.url ?? '/').split('?')[0])
    return m === null ? undefined : decodeURIComponent(m[1])
  }
  const body = bodyOf(req) as { method?: unknown, params?: { id?: unknown } } | undefined
  return body?.method === 'SubscribeToTask' && typeof body.params?.id === 'string' ? body.params.id : undefined
}

function endsTask (event: Record<string, unknown>): boolean {
  const status = (event.statusUpdate as { status?: { state?: string } } | undefined)?.status ??
    (event.task as { status?: { state?: string } } | undefined)?.status
  return status?.state !== undefined && TERMINAL_STATES.has(status.state)
}

export function resumeMiddleware (client: HostCalls, journal: TaskJournal, node: string, binding: Binding) {
  return async (req: IncomingMessage, res: ServerResponse, next: () => void): Promise<void> => {
    const taskId = subscribeTarget(req, binding)
    if (taskId === undefined) { next(); return }
    if (header(req, 'a2a-version') !== '1.0') {
      sendError(req, res, binding, 400, RPC.versionNotSupported, 'VERSION_NOT_SUPPORTED', 'the resume extension is served for A2A-Version 1.0')
      return
    }
    const row = await client.call('a2a.task.get', { node, task_id: taskId })
    if (row === null || row.owner !== callerOf(req)?.nodeId) {
      sendError(req, res, binding, 404, RPC.taskNotFound, 'TASK_NOT_FOUND', `no task ${taskId}`)
      return
    }
    const after = Number.parseInt(header(req, 'last-event-id') ?? '0', 10)
    const done = endsTask({ task: row.task })
    await stream(client, journal, taskId, Number.isSafeInteger(after) && after > 0 ? after : 0, frame(req, binding), res, done)
  }
}

function frame (req: IncomingMessage, binding: Binding): (e: JournalEvent) => string {
  const id = (bodyOf(req) as { id?: unknown } | undefined)?.id ?? null
  return (e) => `id: ${e.seq}\ndata: ${JSON.stringify(binding === 'jsonrpc' ? { jsonrpc: '2.0', id, result: e.event } : e.event)}\n\n`
}

/** Until the subscriber has taken what was written (or is gone): a replay goes no faster than its reader. */
async function drained (res: ServerResponse): Promise<void> {
  if (res.writableLength <= res.writableHighWaterMark || res.destroyed) return
  await new Promise<void>((resolve) => {
    const done = (): void => { res.off('drain', done); res.off('close', done); resolve() }
    res.on('drain', done)
    res.on('close', done)
  })
}

async function stream (client: HostCalls, journal: TaskJournal, taskId: string, after: number, write: (e: JournalEvent) => string, res: ServerResponse, done: boolean): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'A2A-Extensions': RESUME_EXTENSION_URI })
  let last = after
  let ended = false
  // live events heard while the history is replayed, framed, and their bytes
  const pending: Array<{ e: JournalEvent, text: string }> = []
  let held = 0
  let replaying = true
  // a subscriber that stops reading costs bounded memory (this stream is also served outside express's bound)
  const cut = (): void => { if (ended) return; ended = true; stop(); res.destroy() }
  const send = (e: JournalEvent, text = write(e)): void => {
    if (ended || e.seq <= last) return
    last = e.seq
    res.write(text)
    if (overBound(res, held)) { cut(); return }
    if (endsTask(e.event)) finish()
  }
  const stop = journal.listen(taskId, (e) => {
    if (!replaying) { send(e); return }
    const text = write(e)
    pending.push({ e, text })
    held += text.length
    if (overBound(res, held)) cut()
  })
  const finish = (): void => { if (ended) return; ended = true; stop(); res.end() }
  res.on('close', finish)
  replay: for (;;) {
    const page = await client.call('a2a.events', { task_id: taskId, after: last, limit: REPLAY_PAGE })
    for (const e of page) {
      send({ seq: e.seq, event: e.event as Record<string, unknown> })
      await drained(res)
      if (ended) break replay
    }
    if (page.length < REPLAY_PAGE) break
  }
  replaying = false
  for (const p of pending.splice(0)) { held -= p.text.length; send(p.e, p.text) }
  // the task had ended before the events after Last-Event-ID: nothing more will come
  if (done) finish()
}
