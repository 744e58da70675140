// Outbound A2A, what must not be lost or repeated: the TTL running out while
// the agent is down (a dead letter and the sender's ERROR notice, the agent
// never gets it), a daemon killed while a task is open (its answer arrives
// once after the restart), and bad agent URLs (a named error, nothing stored).
import { strict as assert } from 'node:assert'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { RemoteError } from '../../src/control/client.js'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { startEchoAgent, type EchoAgent } from './echo-agent.js'
import { answersUntil, send, waitGone } from './helpers.js'

/** An HTTP server on 127.0.0.1 that serves `body` at the card path (not an A2A agent). */
async function notAnAgent (body: string, type: string): Promise<{ url: string, close: () => Promise<void> }> {
  const app = express()
  app.get('/.well-known/agent-card.json', (_req, res) => { res.type(type).send(body) })
  const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())) } }
}

async function codeOf (h: TestHost, name: string, url: string): Promise<string> {
  const client = await h.client()
  try {
    await client.call('node.add_a2a', { name, url })
    return 'OK'
  } catch (err) {
    return err instanceof RemoteError ? err.code : String(err)
  } finally {
    client.close()
  }
}

describe('a2a outbound - TTL, restart, bad URLs', function () {
  this.timeout(180_000)
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

  it('the TTL runs out while the agent is down: a dead letter, an ERROR notice to the sender, the agent never gets it', async () => {
    const agent = await startEchoAgent()
    const port = agent.port
    await h.ok(['node', 'add-a2a', 'gone', agent.url, '--parent', 'lead'])
    await agent.stop()
    const id = await send(h, 'lead', 'gone', 'too late', ['--ttl', '2s'])
    const dead = await waitFor(async () => jsonLines<{ packetId: string, code: string }>(await h.ok(['outbox', '--dead', '--json'])).find((d) => d.packetId === id), 30_000, 'the dead letter')
    assert.equal(dead.code, 'TTL_EXPIRED')
    const notices = (await answersUntil(h, 'lead', 'lead', (r) => r.some((x) => x.in_reply_to === id), 'the ERROR notice')).filter((x) => x.in_reply_to === id)
    assert.equal(notices.length, 1)
    assert.equal(notices[0].signal, 'ERROR')
    assert.match(notices[0].payload.context ?? '', /TTL_EXPIRED/)
    // the agent comes back: a later message gets through, the expired one never does
    const back: EchoAgent = await startEchoAgent({ port })
    closers.push(back.stop)
    const later = await send(h, 'lead', 'gone', 'in time')
    await answersUntil(h, 'lead', 'gone', (r) => r.some((x) => x.signal === 'RETURN' && x.in_reply_to === later), 'RETURN of the later message')
    assert.deepEqual(back.received.map((m) => m.messageId), [later])
  })

  it('the daemon is killed while a task is open: after the restart its answer arrives, once', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => { open = resolve })
    const agent = await startEchoAgent({ gate: async () => await gate })
    closers.push(agent.stop)
    await h.ok(['node', 'add-a2a', 'slowpoke', agent.url, '--parent', 'lead'])
    const id = await send(h, 'lead', 'slowpoke', 'slow work')
    await answersUntil(h, 'lead', 'slowpoke', (r) => r.some((x) => x.signal === 'MESSAGE'), 'the working message')
    h.kill9()
    await waitGone(h.pid)
    open() // the agent finishes while the sender's host is down
    await h.start()
    const rows = await answersUntil(h, 'lead', 'slowpoke', (r) => r.some((x) => x.signal === 'RETURN'), 'RETURN after the restart')
    assert.deepEqual(rows.map((r) => [r.signal, r.payload.text ?? r.payload.result, r.in_reply_to]), [
      ['MESSAGE', 'working on: slow work', id],
      ['RETURN', 'echo: slow work', id]
    ])
    assert.equal(agent.received.length, 1)
    // a later exchange, then the inbox again: nothing of the old task came twice
    const next = await send(h, 'lead', 'slowpoke', 'quick')
    const all = await answersUntil(h, 'lead', 'slowpoke', (r) => r.some((x) => x.signal === 'RETURN' && x.in_reply_to === next), 'RETURN of the next message')
    assert.equal(all.filter((r) => r.in_reply_to === id).length, 2)
  })

  it('node rm of an agent with a message queued: the message dies as A2A_AGENT_GONE with the ERROR notice', async () => {
    const agent = await startEchoAgent()
    await h.ok(['node', 'add-a2a', 'doomed', agent.url, '--parent', 'lead'])
    await agent.stop()
    const id = await send(h, 'lead', 'doomed', 'never')
    await h.ok(['node', 'rm', 'doomed'])
    const dead = await waitFor(async () => jsonLines<{ packetId: string, code: string }>(await h.ok(['outbox', '--dead', '--json'])).find((d) => d.packetId === id), 30_000, 'the dead letter')
    assert.equal(dead.code, 'A2A_AGENT_GONE')
    const notices = (await answersUntil(h, 'lead', 'lead', (r) => r.some((x) => x.in_reply_to === id), 'the ERROR notice')).filter((x) => x.in_reply_to === id)
    assert.deepEqual(notices.map((n) => n.signal), ['ERROR'])
    assert.ok(!jsonLines<{ name: string }>(await h.ok(['node', 'ls', '--json'])).some((r) => r.name === 'doomed'))
  })

  it('bad agent URLs get a named error and store nothing', async () => {
    const notJson = await notAnAgent('<html>hello</html>', 'text/html')
    const notCard = await notAnAgent(JSON.stringify({ hello: 'world' }), 'application/json')
    const grpcOnly = await notAnAgent(JSON.stringify({ name: 'g', supportedInterfaces: [{ url: 'http://127.0.0.1:1', protocolBinding: 'GRPC', protocolVersion: '1.0' }] }), 'application/json')
    closers.push(notJson.close, notCard.close, grpcOnly.close)
    assert.equal(await codeOf(h, 'bad', 'not a url'), 'A2A_BAD_URL')
    assert.equal(await codeOf(h, 'bad', 'ftp://127.0.0.1/agent'), 'A2A_BAD_URL')
    assert.equal(await codeOf(h, 'bad', 'http://127.0.0.1:1/'), 'A2A_CARD_FETCH')
    assert.equal(await codeOf(h, 'bad', `${notCard.url}/nothing-here.json`), 'A2A_CARD_FETCH')
    assert.equal(await codeOf(h, 'bad', notJson.url), 'A2A_NOT_AN_AGENT')
    assert.equal(await codeOf(h, 'bad', notCard.url), 'A2A_NOT_AN_AGENT')
    assert.equal(await codeOf(h, 'bad', grpcOnly.url), 'A2A_NO_TRANSPORT')
    assert.equal(await codeOf(h, 'lead', notCard.url), 'NAME_COLLISION')
    const cli = await h.run(['node', 'add-a2a', 'bad', 'http://127.0.0.1:1/'])
    assert.notEqual(cli.code, 0)
    assert.match(cli.stderr, /cannot fetch the agent card at http:\/\/127\.0\.0\.1:1\/\.well-known\/agent-card\.json/)
    const names = jsonLines<{ name: string }>(await h.ok(['node', 'ls', '--json'])).map((r) => r.name)
    assert.ok(!names.includes('bad'), `nothing stored: ${names.join(' ')}`)
  })
})
