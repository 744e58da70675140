// A2A face bound (issue 13 item 7): an SSE subscriber that stops reading is
// disconnected once its unread output passes SSE_MAX_BUFFERED (4 MiB), on each
// stream writer: the JSON-RPC binding's (src/a2a/jsonrpc.ts), the HTTP+JSON
// binding's under express (src/a2a/server.ts boundOutput) and the resume
// extension's (src/a2a/resume.ts), live and replaying. The subscribers are raw
// sockets that pause after the first event; the node then answers with ~12.5 MiB
// of events, past the bound plus what loopback socket buffers absorb (~4 MiB:
// the daemon's send buffer grows to tcp_wmem's max). A reader that reads still
// gets every event, also a replay of a history larger than the bound.
// The daemon's RSS is not asserted: answering a task with a 12.5 MiB history
// (the SDK loads, clones and saves the whole task per event) grew it ~200 MiB
// in either case, bound or none; the cut itself is what drops the unread output.
// That load-clone-save makes each event cost as much as the history before it: on
// a 2-core machine also running other tests, 64 events took 60-100 s to apply,
// hence the generous waits (EVENTS_APPLIED_MS) and test timeout.
import { strict as assert } from 'node:assert'
import { connect, type Socket } from 'node:net'
import { TaskState } from '@a2a-js/sdk'
import { waitFor } from '../utils/hosts.js'
import { grantA2a, inbox, sdkClient, startFaceHost, type Credential, type FaceHost } from './helpers.js'

const RESUME = 'https://amesh.dev/extensions/a2a-resume/v1'
/** one CHECKPOINT's text (the packet text field holds 256 KiB) */
const EVENT_TEXT = 200 * 1024
/** CHECKPOINTs the node sends: about 12.5 MiB of events for every subscriber */
const EVENTS = 64
/** how long the node's events may take to be applied to the task (they grow quadratically in cost, see above) */
const EVENTS_APPLIED_MS = 200_000

interface Paused { name: string, sock: Socket, received: () => string, ended: Promise<'closed' | 'terminal'> }

/** A raw HTTP/1.1 request that asks to keep nothing open after its answer. */
function request (method: string, path: string, secret: string, headers: Record<string, string>, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'A2A-Version: 1.0', `Authorization: Bearer ${secret}`, 'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`
}

/**
 * Open a subscription on a raw socket, read up to the first SSE event, then
 * stop reading (the kernel's receive buffer still takes what fits). `ended` settles once reading resumes: 'closed' when
 * the server ends the connection, 'terminal' when the task's end arrives.
 */
async function openPaused (base: string, name: string, raw: string): Promise<Paused> {
  const url = new URL(base)
  const sock = connect({ host: url.hostname, port: Number(url.port) })
  const chunks: Buffer[] = []
  const received = (): string => Buffer.concat(chunks).toString('latin1')
  sock.on('error', () => {}) // a reset is one way the server cuts it
  let firstEvent: () => void = () => {}
  let onTerminal: () => void = () => {}
  const first = new Promise<void>((resolve) => { firstEvent = resolve })
  const ended = new Promise<'closed' | 'terminal'>((resolve) => {
    onTerminal = () => { resolve('terminal') }
    sock.on('close', () => { resolve('closed') })
  })
  sock.on('data', (d: Buffer) => {
    chunks.push(d)
    const text = received()
    const head = text.indexOf('\r\n\r\n')
    if (head >= 0 && text.indexOf('\n\n', head + 4) >= 0) firstEvent()
    if (text.includes('TASK_STATE_COMPLETED')) onTerminal()
  })
  sock.write(raw)
  await Promise.race([first, ended.then(() => { throw new Error(`${name}: closed before its first event: ${received().slice(0, 300)}`) })])
  sock.pause()
  assert.match(received(), /^HTTP\/1\.1 200 /, `${name} answered ${received().slice(0, 200)}`)
  return { name, sock, received, ended }
}

/** Read a stream through to the end: the event ids and the last event's state. */
async function readAll (base: string, secret: string, id: string): Promise<{ ids: number[], last: string }> {
  const r = await fetch(`${base}/nodes/lead/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${secret}`, 'Last-Event-ID': '0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'SubscribeToTask', params: { id } })
  })
  const text = await r.text()
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
  const data = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as { result: { statusUpdate?: { status: { state: string } } } })
  return { ids, last: data[data.length - 1]?.result.statusUpdate?.status.state ?? '' }
}

/** Resume reading: the server must have ended the connection before the task's end, and before all its CHECKPOINTs. */
async function assertCut (s: Paused): Promise<void> {
  s.sock.resume()
  assert.equal(await s.ended, 'closed', `${s.name}: the task's end arrived, the server never cut the stream`)
  const checkpoints = s.received().split('CHECKPOINT: ').length - 1
  assert.ok(checkpoints < EVENTS, `${s.name} got all ${EVENTS} CHECKPOINTs`)
  assert.ok(!s.received().includes('TASK_STATE_COMPLETED'))
}

describe('a2a face - a subscriber that stops reading', function () {
  this.timeout(2 * EVENTS_APPLIED_MS + 60_000)
  let h: FaceHost
  let cred: Credential
  const tasks: string[] = []
  const open: Socket[] = []

  before(async () => {
    h = await startFaceHost()
    await h.ok(['node', 'add', 'lead'])
    cred = await grantA2a(h, 'lead', 'reader')
  })
  after(async () => {
    for (const s of open) s.destroy()
    await h?.cleanup()
  })

  async function rpc (method: string, params: unknown): Promise<Record<string, unknown>> {
    const r = await fetch(`${h.base}/nodes/lead/jsonrpc`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${cred.secret}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
    })
    return (await r.json() as { result: Record<string, unknown> }).result
  }

  async function paused (name: string, task: string, headers: Record<string, string>): Promise<Paused> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: task } })
    const s = await openPaused(h.base, name, name === 'rest'
      ? request('GET', `/nodes/lead/rest/tasks/${task}:subscribe`, cred.secret, headers)
      : request('POST', '/nodes/lead/jsonrpc', cred.secret, headers, body))
    open.push(s.sock)
    return s
  }

  /** A task the node answers with `events` large CHECKPOINTs, after `before` of them, while `subscribe`d raw sockets wait paused; then a RETURN. */
  async function chattyTask (text: string, before: number, subscribe: (task: string) => Promise<Paused[]>): Promise<{ task: string, subscribers: Paused[] }> {
    const started = await rpc('SendMessage', { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } })
    const task = (started.task as { id: string }).id
    const spawn = (await inbox(h, 'lead')).find((p) => p.payload.context === text)
    assert.ok(spawn !== undefined)
    const checkpoints = async (from: number, to: number): Promise<void> => {
      const lines = Array.from({ length: to - from }, (_, i) => `${from + i}:${'x'.repeat(EVENT_TEXT)}`).join('\n') + '\n'
      await h.ok(['send', '--as', 'lead', 'reader', '-', '--signal', 'CHECKPOINT', '--reply-to', spawn.id], { input: lines })
    }
    if (before > 0) {
      await checkpoints(0, before)
      await waitFor(async () => {
        const t = await rpc('GetTask', { id: task, historyLength: 0 })
        return (t.status as { message: { parts: Array<{ text: string }> } }).message.parts[0].text.startsWith(`CHECKPOINT: ${before - 1}:`) ? true : undefined
      }, EVENTS_APPLIED_MS, `${before} CHECKPOINTs recorded`)
    }
    const subscribers = await subscribe(task)
    await checkpoints(before, EVENTS)
    await h.ok(['send', '--as', 'lead', 'reader', `${text} done`, '--signal', 'RETURN', '--reply-to', spawn.id])
    await waitFor(async () => {
      const t = await rpc('GetTask', { id: task, historyLength: 0 })
      return (t.status as { state: string }).state === 'TASK_STATE_COMPLETED' ? true : undefined
    }, EVENTS_APPLIED_MS, 'the task to be COMPLETED')
    return { task, subscribers }
  }

  it('a2a face - live streams (JSON-RPC, HTTP+JSON, resume extension) are cut past SSE_MAX_BUFFERED', async () => {
    const one = await chattyTask('first job', 0, async (task) => [await paused('jsonrpc', task, {}), await paused('rest', task, {}), await paused('resume', task, { 'A2A-Extensions': RESUME })])
    tasks.push(one.task)
    for (const s of one.subscribers) await assertCut(s)
  })

  it('a2a face - a replay (Last-Event-ID) that stops reading is cut once the live events it holds pass the bound', async () => {
    // half the history exists: the replay fills the socket and waits for its reader; the other half comes live
    const two = await chattyTask('second job', EVENTS / 2, async (task) => [await paused('replay', task, { 'Last-Event-ID': '0' })])
    tasks.push(two.task)
    for (const s of two.subscribers) await assertCut(s)
  })

  it('a2a face - after the cuts a reading client gets each whole task (replayed past the bound), the SDK client its result', async () => {
    const client = await sdkClient(h.base, 'lead', cred.secret, 'JSONRPC')
    for (const [i, task] of tasks.entries()) {
      const whole = await readAll(h.base, cred.secret, task)
      assert.deepEqual(whole.ids, Array.from({ length: EVENTS + 3 }, (_, k) => k + 1))
      assert.equal(whole.last, 'TASK_STATE_COMPLETED')
      const t = await client.getTask({ tenant: '', id: task, historyLength: 0 })
      assert.equal(t.status?.state, TaskState.TASK_STATE_COMPLETED)
      assert.deepEqual(t.artifacts.map((a) => a.parts[0].content), [{ $case: 'text', value: `${['first', 'second'][i]} job done` }])
    }
  })
})
