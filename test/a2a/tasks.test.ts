// A2A face: ESCALATE → INPUT_REQUIRED and the caller's answer continues the
// task; CancelTask; tasks after a daemon restart; resume with Last-Event-ID;
// refusals (no, forged, expired, revoked credential; MESSAGE-only cannot SPAWN).
import { strict as assert } from 'node:assert'
import { setTimeout as sleep } from 'node:timers/promises'
import { TaskState, type StreamResponse } from '@a2a-js/sdk'
import { waitFor } from '../utils/hosts.js'
import { faceBase, grantA2a, inbox, sdkClient, startFaceHost, textMessage, waitInbox, type Credential, type FaceHost } from './helpers.js'

const RESUME = 'https://amesh.dev/extensions/a2a-resume/v1'

function stateOf (e: StreamResponse): TaskState | undefined {
  if (e.payload?.$case === 'statusUpdate') return e.payload.value.status?.state
  if (e.payload?.$case === 'task') return e.payload.value.status?.state
  return undefined
}

async function rpc (base: string, node: string, secret: string | undefined, method: string, params: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(`${base}/nodes/${node}/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...(secret === undefined ? {} : { Authorization: `Bearer ${secret}` }), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  })
}

const sendParams = (text: string): unknown => ({ message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } })

/** Read SSE events (id + data) until `n` have come, then cut the connection. */
async function readSse (res: Response, n: number): Promise<Array<{ id: number, data: Record<string, unknown> }>> {
  const out: Array<{ id: number, data: Record<string, unknown> }> = []
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  let buf = ''
  while (out.length < n) {
    const { value, done } = await reader.read()
    if (done) break
    buf += Buffer.from(value).toString('utf8')
    let i
    while ((i = buf.indexOf('\n\n')) >= 0 && out.length < n) {
      const block = buf.slice(0, i)
      buf = buf.slice(i + 2)
      const id = /^id: (\d+)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (id !== undefined && data !== undefined) out.push({ id: Number(id), data: (JSON.parse(data) as { result: Record<string, unknown> }).result })
    }
  }
  await reader.cancel()
  return out
}

describe('a2a face - tasks, resume, refusals', function () {
  this.timeout(180_000)
  let a: FaceHost
  let cred: Credential

  before(async () => {
    a = await startFaceHost()
    await a.ok(['node', 'add', 'lead'])
    cred = await grantA2a(a, 'lead', 'caller')
  })
  after(async () => { await a?.cleanup() })

  it('a2a face - ESCALATE asks for input; the answer continues the same task to COMPLETED', async () => {
    const client = await sdkClient(a.base, 'lead', cred.secret, 'JSONRPC')
    const n0 = (await inbox(a, 'lead')).length
    const first: StreamResponse[] = []
    for await (const e of client.sendMessageStream({ tenant: '', message: textMessage('deploy?'), configuration: undefined, metadata: undefined })) {
      first.push(e)
      if (e.payload?.$case === 'task') {
        const pkt = (await waitInbox(a, 'lead', n0 + 1))[n0]
        await a.ok(['send', '--as', 'lead', 'caller', 'which env?', '--signal', 'ESCALATE', '--payload', '{"options":["staging","prod"]}', '--reply-to', pkt.id])
      }
    }
    const last = first[first.length - 1]
    assert.equal(stateOf(last), TaskState.TASK_STATE_INPUT_REQUIRED)
    const taskId = first[0].payload?.$case === 'task' ? first[0].payload.value.id : ''
    const contextId = first[0].payload?.$case === 'task' ? first[0].payload.value.contextId : ''
    const second: StreamResponse[] = []
    for await (const e of client.sendMessageStream({ tenant: '', message: textMessage('staging', { taskId, contextId }), configuration: undefined, metadata: undefined })) {
      second.push(e)
      if (e.payload?.$case === 'task') {
        const pkts = await waitInbox(a, 'lead', n0 + 2)
        const answer = pkts[n0 + 1]
        assert.equal(answer.signal, 'MESSAGE')
        assert.equal(answer.payload.text, 'staging')
        assert.equal(answer.conversation_id, contextId)
        await a.ok(['send', '--as', 'lead', 'caller', 'deployed to staging', '--signal', 'RETURN', '--reply-to', answer.id])
      }
    }
    assert.equal(second[0].payload?.$case === 'task' ? second[0].payload.value.id : '', taskId)
    assert.equal(stateOf(second[second.length - 1]), TaskState.TASK_STATE_COMPLETED)
  })

  it('a2a face - CancelTask cancels a working task', async () => {
    const r = await (await rpc(a.base, 'lead', cred.secret, 'SendMessage', sendParams('long job'))).json() as { result: { task: { id: string } } }
    const id = r.result.task.id
    const c = await (await rpc(a.base, 'lead', cred.secret, 'CancelTask', { id })).json() as { result: { status: { state: string } } }
    assert.equal(c.result.status.state, 'TASK_STATE_CANCELED')
  })

  it('a2a face - resume: cut after event k, Last-Event-ID k gives exactly k+1…', async () => {
    const r = await (await rpc(a.base, 'lead', cred.secret, 'SendMessage', sendParams('resume me'))).json() as { result: { task: { id: string } } }
    const id = r.result.task.id
    const spawn = (await inbox(a, 'lead')).find((p) => p.payload.context === 'resume me')
    assert.ok(spawn !== undefined)
    for (const step of ['one', 'two', 'three']) await a.ok(['send', '--as', 'lead', 'caller', step, '--signal', 'CHECKPOINT', '--reply-to', spawn.id])
    const first = await readSse(await rpc(a.base, 'lead', cred.secret, 'SubscribeToTask', { id }, { 'A2A-Extensions': RESUME }), 3)
    assert.deepEqual(first.map((e) => e.id), [1, 2, 3])
    await a.ok(['send', '--as', 'lead', 'caller', 'finished', '--signal', 'RETURN', '--reply-to', spawn.id])
    const rest = await readSse(await rpc(a.base, 'lead', cred.secret, 'SubscribeToTask', { id }, { 'Last-Event-ID': '3' }), 100)
    assert.deepEqual(rest.map((e) => e.id), [4, 5, 6])
    assert.ok('statusUpdate' in rest[0].data)
    assert.ok('artifactUpdate' in rest[1].data)
    assert.equal((rest[2].data.statusUpdate as { status: { state: string } }).status.state, 'TASK_STATE_COMPLETED')
    await waitFor(async () => {
      const t = await (await rpc(a.base, 'lead', cred.secret, 'GetTask', { id })).json() as { result: { status: { state: string } } }
      return t.result.status.state === 'TASK_STATE_COMPLETED'
    }, 20_000, 'the stored task to be COMPLETED')
  })

  it('a2a face - two concurrent subscribers get the same events in the same order', async () => {
    const r = await (await rpc(a.base, 'lead', cred.secret, 'SendMessage', sendParams('watch me'))).json() as { result: { task: { id: string } } }
    const id = r.result.task.id
    const spawn = (await inbox(a, 'lead')).find((p) => p.payload.context === 'watch me')
    assert.ok(spawn !== undefined)
    const subs = [0, 1].map(async () => await readSse(await rpc(a.base, 'lead', cred.secret, 'SubscribeToTask', { id }, { 'A2A-Extensions': RESUME }), 100))
    // connected before or after the packets, each subscriber gets the whole history once, in order
    for (const step of ['a', 'b']) await a.ok(['send', '--as', 'lead', 'caller', step, '--signal', 'BLOCKED_ON', '--reply-to', spawn.id])
    await a.ok(['send', '--as', 'lead', 'caller', 'ok', '--signal', 'RETURN', '--reply-to', spawn.id])
    const [x, y] = await Promise.all(subs)
    assert.deepEqual(x.map((e) => e.id), [1, 2, 3, 4, 5])
    assert.deepEqual(y, x)
    await waitFor(async () => {
      const t = await (await rpc(a.base, 'lead', cred.secret, 'GetTask', { id })).json() as { result: { status: { state: string } } }
      return t.result.status.state === 'TASK_STATE_COMPLETED'
    }, 20_000, 'the stored task to be COMPLETED')
  })

  it('a2a face - GetTask and ListTasks show the same tasks after a daemon restart', async () => {
    const before = await (await rpc(a.base, 'lead', cred.secret, 'ListTasks', {})).json() as { result: { tasks: Array<{ id: string, status: { state: string } }> } }
    assert.ok(before.result.tasks.length >= 3)
    await a.stop()
    await a.start()
    a.base = await faceBase(a)
    const after = await (await rpc(a.base, 'lead', cred.secret, 'ListTasks', {})).json() as { result: { tasks: Array<{ id: string, status: { state: string } }> } }
    assert.deepEqual(after.result.tasks.map((t) => [t.id, t.status.state]).sort(), before.result.tasks.map((t) => [t.id, t.status.state]).sort())
    const one = await (await rpc(a.base, 'lead', cred.secret, 'GetTask', { id: before.result.tasks[0].id })).json() as { result: { id: string } }
    assert.equal(one.result.id, before.result.tasks[0].id)
  })

  it('a2a face - no, forged, expired and revoked credentials are refused and nothing reaches the inbox', async () => {
    const n0 = (await inbox(a, 'lead')).length
    const none = await rpc(a.base, 'lead', undefined, 'SendMessage', sendParams('x'))
    assert.equal(none.status, 401)
    assert.equal(((await none.json()) as { error: { code: number } }).error.code, -32040)
    assert.equal((await rpc(a.base, 'lead', 'amesh-a2a.forged', 'SendMessage', sendParams('x'))).status, 401)
    const short = await grantA2a(a, 'lead', 'short-lived', ['--expires', '1s'])
    await sleep(1500)
    assert.equal((await rpc(a.base, 'lead', short.secret, 'SendMessage', sendParams('x'))).status, 401)
    const revoked = await grantA2a(a, 'lead', 'revoked-one')
    await a.ok(['revoke', revoked.token_id, '--as', 'lead'])
    assert.equal((await rpc(a.base, 'lead', revoked.secret, 'SendMessage', sendParams('x'))).status, 401)
    await a.ok(['node', 'add', 'other'])
    assert.equal((await rpc(a.base, 'other', cred.secret, 'SendMessage', sendParams('x'))).status, 403)
    assert.equal((await rpc(a.base, 'nobody', cred.secret, 'SendMessage', sendParams('x'))).status, 404)
    assert.deepEqual((await inbox(a, 'lead')).slice(n0).filter((p) => p.payload.context === 'x'), [])
    assert.deepEqual((await inbox(a, 'other')).filter((p) => p.payload.context === 'x'), [])
  })

  it('a2a face - a MESSAGE-only credential cannot start a task (SPAWN)', async () => {
    const n0 = (await inbox(a, 'lead')).length
    const msgOnly = await grantA2a(a, 'lead', 'message-only', ['--signals', 'MESSAGE'])
    const r = await (await rpc(a.base, 'lead', msgOnly.secret, 'SendMessage', sendParams('spawn please'))).json() as { result: { task: { status: { state: string } } } }
    assert.equal(r.result.task.status.state, 'TASK_STATE_REJECTED')
    // the ACL may leave lead a denial notice; the SPAWN itself never arrives
    const arrived = (await inbox(a, 'lead')).slice(n0)
    assert.deepEqual(arrived.filter((p) => p.signal === 'SPAWN' || p.from === 'message-only'), [])
  })

  it('a2a face - malformed JSON-RPC gets -32700; a missing A2A-Version (0.3) gets VersionNotSupported', async () => {
    const bad = await fetch(`${a.base}/nodes/lead/jsonrpc`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${cred.secret}` }, body: '{"jsonrpc": ' })
    assert.equal(((await bad.json()) as { error: { code: number } }).error.code, -32700)
    const old = await fetch(`${a.base}/nodes/lead/jsonrpc`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${cred.secret}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }) })
    assert.equal(((await old.json()) as { error: { code: number } }).error.code, -32009)
  })
})
