// A2A face: a task acknowledged to the client survives kill -9. Concurrent
// SendMessage calls (returnImmediately) run while the daemon is killed; after
// the restart every task that was answered is there (GetTask, in WORKING, with
// the message) and its SPAWN is in the node's inbox, exactly once.
import { strict as assert } from 'node:assert'
import { waitFor } from '../utils/hosts.js'
import { faceBase, grantA2a, inbox, startFaceHost, type Credential, type FaceHost } from './helpers.js'
import { processAlive } from '../../src/util/process-alive.js'

const LOOPS = 8

interface Acked { id: string, contextId: string, text: string }

async function rpc (base: string, secret: string, method: string, params: unknown): Promise<{ result?: Record<string, unknown>, error?: unknown }> {
  const res = await fetch(`${base}/nodes/lead/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  })
  return await res.json() as { result?: Record<string, unknown>, error?: unknown }
}

/** Send until the first failure (the daemon is gone); every answered task is recorded. */
async function sendLoop (base: string, secret: string, loop: number, acked: Acked[]): Promise<void> {
  for (let k = 0; ; k++) {
    const text = `crash ${loop} ${k}`
    const params = { message: { messageId: `crash-${loop}-${k}`, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } }
    let r
    try { r = await rpc(base, secret, 'SendMessage', params) } catch { return }
    const task = r.result?.task as { id?: string, contextId?: string } | undefined
    if (task?.id === undefined || task.contextId === undefined) return
    acked.push({ id: task.id, contextId: task.contextId, text })
  }
}

async function waitGone (pid: number): Promise<void> {
  await waitFor(async () => !processAlive(pid), 20_000, `pid ${pid} to exit`)
}

describe('a2a face - durability', function () {
  this.timeout(180_000)
  let a: FaceHost
  let cred: Credential

  before(async () => {
    a = await startFaceHost()
    await a.ok(['node', 'add', 'lead'])
    cred = await grantA2a(a, 'lead', 'crash-client')
  })

  after(async () => { await a?.cleanup() })

  it('a2a face - every task answered before kill -9 is there after the restart, its SPAWN in the inbox once', async () => {
    const acked: Acked[] = []
    const loops = Array.from({ length: LOOPS }, async (_, i) => await sendLoop(a.base, cred.secret, i, acked))
    await waitFor(async () => acked.length >= 100 || undefined, 60_000, '100 answered SendMessage calls')
    a.kill9()
    await Promise.all(loops)
    await waitGone(a.pid)
    const answered = [...acked]
    await a.start()
    a.base = await faceBase(a)
    for (const t of answered) {
      const got = await rpc(a.base, cred.secret, 'GetTask', { id: t.id })
      const task = got.result as { id: string, contextId: string, status: { state: string }, history: Array<{ parts: Array<{ text?: string }> }> } | undefined
      assert.equal(task?.id, t.id, `task ${t.id} (${t.text}) after the restart: ${JSON.stringify(got.error)}`)
      assert.equal(task.contextId, t.contextId)
      assert.equal(task.status.state, 'TASK_STATE_WORKING')
      assert.ok(task.history.some((m) => m.parts.some((p) => p.text === t.text)), `the message of ${t.id} is in its history`)
    }
    const spawns = (await inbox(a, 'lead')).filter((p) => p.signal === 'SPAWN')
    for (const t of answered) {
      const mine = spawns.filter((p) => p.conversation_id === t.contextId)
      assert.equal(mine.length, 1, `one SPAWN for ${t.text} in lead's inbox`)
      assert.equal(mine[0].payload.context, t.text)
    }
  })
})
