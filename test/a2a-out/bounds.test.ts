// Outbound A2A bounds: an "agent" whose card is valid but whose endpoint
// answers with more than the response limit, or with something that is not
// A2A, gets a dead letter with that code and the sender's ERROR notice.
import { strict as assert } from 'node:assert'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { answersUntil, send } from './helpers.js'

/** A card that points at `/rpc`, where `answer` answers every request. */
async function fakeAgent (answer: express.RequestHandler): Promise<{ url: string, hits: () => number, close: () => Promise<void> }> {
  const app = express()
  let hits = 0
  const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  app.get('/.well-known/agent-card.json', (_req, res) => {
    res.json({ name: 'fake', description: '', version: '1', supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: { streaming: false }, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [] })
  })
  app.post('/rpc', (req, res, next) => { hits++; answer(req, res, next) })
  return { url: base, hits: () => hits, close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())) } }
}

describe('a2a outbound - answer bounds', function () {
  this.timeout(120_000)
  let h: TestHost
  const closers: Array<() => Promise<void>> = []

  before(async () => {
    h = await startHost()
    await h.ok(['node', 'add', 'lead'])
  })
  after(async () => {
    for (const c of closers) await c().catch(() => {})
    await h?.cleanup()
  })

  async function deadCode (name: string, answer: express.RequestHandler): Promise<{ code: string, hits: number }> {
    const agent = await fakeAgent(answer)
    closers.push(agent.close)
    await h.ok(['node', 'add-a2a', name, agent.url, '--parent', 'lead'])
    const id = await send(h, 'lead', name, 'hello')
    const dead = await waitFor(async () => jsonLines<{ packetId: string, code: string }>(await h.ok(['outbox', '--dead', '--json'])).find((d) => d.packetId === id), 30_000, 'the dead letter')
    const notices = (await answersUntil(h, 'lead', 'lead', (r) => r.some((x) => x.in_reply_to === id), 'the ERROR notice')).filter((x) => x.in_reply_to === id)
    assert.deepEqual(notices.map((n) => n.signal), ['ERROR'])
    assert.match(notices[0].payload.context ?? '', new RegExp(dead.code))
    return { code: dead.code, hits: agent.hits() }
  }

  it('an answer over the 4 MiB limit: A2A_RESPONSE_TOO_LARGE, sent once', async () => {
    const big = 'x'.repeat(5 * 1024 * 1024)
    const r = await deadCode('huge', (_req, res) => { res.type('application/json').send(`{"jsonrpc":"2.0","id":1,"result":"${big}"}`) })
    assert.deepEqual(r, { code: 'A2A_RESPONSE_TOO_LARGE', hits: 1 })
  })

  it('an answer that is not A2A: A2A_BAD_ANSWER, sent once', async () => {
    const r = await deadCode('html', (_req, res) => { res.type('text/html').send('<html>not an agent</html>') })
    assert.deepEqual(r, { code: 'A2A_BAD_ANSWER', hits: 1 })
  })

  it('an A2A error answer: A2A_REJECTED, sent once', async () => {
    const r = await deadCode('says-no', (req, res) => { res.json({ jsonrpc: '2.0', id: (req.body as { id?: number } | undefined)?.id ?? 1, error: { code: -32602, message: 'no thanks' } }) })
    assert.deepEqual(r, { code: 'A2A_REJECTED', hits: 1 })
  })
})
