// A2A face bounds: body limit, per-credential rate limit, parts over the packet limit.
import { strict as assert } from 'node:assert'
import { grantA2a, inbox, startFaceHost, type Credential, type FaceHost } from './helpers.js'

async function send (h: FaceHost, secret: string, text: string): Promise<Response> {
  return await fetch(`${h.base}/nodes/lead/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${secret}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } } })
  })
}

describe('a2a face - bounds', function () {
  this.timeout(120_000)
  let h: FaceHost
  let cred: Credential
  before(async () => {
    h = await startFaceHost({ a2a: { listen: '127.0.0.1:0', body_limit: 300 * 1024, rate_per_minute: 4 } })
    await h.ok(['node', 'add', 'lead'])
    cred = await grantA2a(h, 'lead', 'bounded')
  })
  after(async () => { await h?.cleanup() })

  it('a2a face - a body over the limit is 413; parts over the packet limit are refused; nothing arrives', async () => {
    const n0 = (await inbox(h, 'lead')).length
    const big = await send(h, cred.secret, 'x'.repeat(400 * 1024))
    assert.equal(big.status, 413)
    const over = await (await send(h, cred.secret, 'y'.repeat(257 * 1024))).json() as { result: { task: { status: { state: string, message: { parts: Array<{ text: string }> } } } } }
    assert.equal(over.result.task.status.state, 'TASK_STATE_REJECTED')
    assert.match(over.result.task.status.message.parts[0].text, /packet field holds at most/)
    assert.equal((await inbox(h, 'lead')).length, n0)
  })

  it('a2a face - past rate_per_minute a credential gets 429', async () => {
    const codes: number[] = []
    for (let i = 0; i < 4; i++) codes.push((await send(h, cred.secret, `r${i}`)).status)
    // the refused-parts request above counted (the 413 did not: its body was never read through)
    assert.deepEqual(codes, [200, 200, 200, 429])
  })
})
