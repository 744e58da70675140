// Outbound A2A: an external agent built with the official SDK's server is
// registered with `amesh node add-a2a`; `amesh send` to it is delivered
// once, and its answers land in the sender's inbox, in order, once.
import { strict as assert } from 'node:assert'
import { jsonLines, startHost, type TestHost } from '../utils/hosts.js'
import { answersUntil, send } from './helpers.js'
import { startEchoAgent, type EchoAgent } from './echo-agent.js'

const textOfMessage = (m: EchoAgent['received'][number]): string => m.parts.map((p) => p.content?.$case === 'text' ? p.content.value : '').join('')

describe('a2a outbound - SDK agents as nodes', function () {
  this.timeout(120_000)
  let h: TestHost
  const agents: EchoAgent[] = []

  before(async () => {
    h = await startHost()
    await h.ok(['node', 'add', 'lead'])
  })
  after(async () => {
    for (const a of agents) await a.stop().catch(() => {})
    await h?.cleanup()
  })

  it('add-a2a registers the agent; send delivers once; working message and RETURN land in order, once', async () => {
    const agent = await startEchoAgent({ streaming: true })
    agents.push(agent)
    const added = JSON.parse(await h.ok(['node', 'add-a2a', 'echo', agent.url, '--parent', 'lead', '--json'])) as { kind: string, agent: string, streaming: boolean, card_url: string }
    assert.equal(added.kind, 'a2a')
    assert.equal(added.agent, 'Echo Agent')
    assert.equal(added.streaming, true)
    assert.equal(added.card_url, `${agent.url}/.well-known/agent-card.json`)
    const ls = jsonLines<{ name: string, kind: string, url?: string }>(await h.ok(['node', 'ls', '--json'])).find((r) => r.name === 'echo')
    assert.equal(ls?.kind, 'a2a')
    assert.equal(ls?.url, added.card_url)
    const nodes = jsonLines<{ name: string, kind: string }>(await h.ok(['nodes', '--json'])).find((r) => r.name === 'echo')
    assert.equal(nodes?.kind, 'a2a')

    const first = await send(h, 'lead', 'echo', 'hello')
    const second = await send(h, 'lead', 'echo', 'again')
    const rows = await answersUntil(h, 'lead', 'echo', (r) => r.filter((x) => x.signal === 'RETURN').length >= 2, 'two RETURNs')
    assert.deepEqual(agent.received.map(textOfMessage), ['hello', 'again'])
    assert.deepEqual(agent.received.map((m) => m.messageId), [first, second])
    assert.equal(agent.received[0].contextId, first, 'a packet without a conversation starts its own (its id)')
    assert.deepEqual(rows.map((r) => [r.signal, r.payload.text ?? r.payload.result, r.in_reply_to]), [
      ['MESSAGE', 'working on: hello', first],
      ['RETURN', 'echo: hello', first],
      ['MESSAGE', 'working on: again', second],
      ['RETURN', 'echo: again', second]
    ])
    assert.equal(rows[1].conversation_id, first)
    assert.ok(rows[1].session_id !== undefined && rows[1].session_id !== '', 'the answer names the A2A task')
  })

  it('an answer holding a lone surrogate arrives, once, with U+FFFD in its place (not refused and lost)', async () => {
    const agent = await startEchoAgent({ streaming: true })
    agents.push(agent)
    await h.ok(['node', 'add-a2a', 'halves', agent.url, '--parent', 'lead'])
    const id = await send(h, 'lead', 'halves', 'half a pair')
    const rows = await answersUntil(h, 'lead', 'halves', (r) => r.some((x) => x.signal === 'RETURN'), 'RETURN from halves')
    assert.deepEqual(rows.map((r) => [r.signal, r.payload.text ?? r.payload.result, r.in_reply_to]), [
      ['MESSAGE', 'working on: half a pair', id],
      ['RETURN', 'echo: half a pair \ufffd', id]
    ])
  })

  it('a non-streaming agent: the send returns at once, the task is polled to its RETURN', async () => {
    const agent = await startEchoAgent({ streaming: false })
    agents.push(agent)
    await h.ok(['node', 'add-a2a', 'plain', `${agent.url}/.well-known/agent-card.json`, '--parent', 'lead'])
    const id = await send(h, 'lead', 'plain', 'polled')
    const rows = await answersUntil(h, 'lead', 'plain', (r) => r.some((x) => x.signal === 'RETURN'), 'RETURN from plain')
    assert.equal(agent.received.length, 1)
    const returns = rows.filter((r) => r.signal === 'RETURN')
    assert.deepEqual(returns.map((r) => [r.payload.result, r.in_reply_to]), [['echo: polled', id]])
  })

  it('INPUT_REQUIRED → ESCALATE; the reply to it continues the same task to its RETURN', async () => {
    const agent = agents[0]
    const asked = await send(h, 'lead', 'echo', 'ask me')
    const [esc] = (await answersUntil(h, 'lead', 'echo', (r) => r.some((x) => x.signal === 'ESCALATE'), 'ESCALATE')).filter((x) => x.signal === 'ESCALATE')
    assert.equal(esc.in_reply_to, asked)
    assert.equal(esc.payload.text, 'which colour? (ask me)')
    const reply = await send(h, 'lead', 'echo', 'blue', ['--reply-to', esc.id])
    const rows = await answersUntil(h, 'lead', 'echo', (r) => r.some((x) => x.signal === 'RETURN' && x.payload.result === 'answer: blue'), 'RETURN of the continued task')
    const last = rows.filter((x) => x.signal === 'RETURN').at(-1)
    assert.equal(last?.in_reply_to, reply)
    assert.equal(last?.session_id, esc.session_id)
    const [q, a] = agent.received.slice(-2)
    assert.equal(textOfMessage(a), 'blue')
    assert.equal(a.taskId, q.taskId === '' ? a.taskId : q.taskId)
    assert.equal(a.taskId, esc.session_id, 'the reply carried the task the agent opened')
    assert.equal(a.contextId, asked)
    assert.equal(rows.filter((x) => x.signal === 'ESCALATE').length, 1)
  })

  it('the ACL applies as to a local node: an ungranted sender is refused, a grant issued as the agent node lets it send', async () => {
    const agent = agents[0]
    const before = agent.received.length
    const denied = await h.run(['send', '--as', 'stranger', 'echo', 'let me in', '--json'])
    assert.notEqual(denied.code, 0)
    assert.match(denied.stderr, /NO_GRANT/)
    assert.equal(agent.received.length, before)
    await h.ok(['grant', '--as', 'echo', '--to', 'stranger', '--signals', 'MESSAGE'])
    await send(h, 'stranger', 'echo', 'granted')
    await answersUntil(h, 'stranger', 'echo', (r) => r.some((x) => x.signal === 'RETURN'), 'RETURN to stranger')
    assert.equal(agent.received.length, before + 1)
    const sendAs = await h.run(['send', '--as', 'echo', 'lead', 'hi'])
    assert.notEqual(sendAs.code, 0)
    assert.match(sendAs.stderr, /external A2A agent/)
  })

  it('the agent down at send time: the message waits in the outbox and is delivered once it is up', async () => {
    const agent = await startEchoAgent()
    const port = agent.port
    await h.ok(['node', 'add-a2a', 'later', agent.url, '--parent', 'lead'])
    await agent.stop()
    const id = await send(h, 'lead', 'later', 'are you there')
    const status = JSON.parse(await h.ok(['status', '--json'])) as { outbox: { by_destination: Record<string, number> } }
    assert.equal(Object.entries(status.outbox.by_destination).filter(([d]) => d.startsWith('a2a:')).map(([, n]) => n).reduce((a, b) => a + b, 0), 1)
    const back = await startEchoAgent({ port })
    agents.push(back)
    const rows = await answersUntil(h, 'lead', 'later', (r) => r.some((x) => x.signal === 'RETURN'), 'RETURN once the agent is up')
    assert.deepEqual(back.received.map((m) => m.messageId), [id])
    assert.deepEqual(rows.filter((r) => r.signal === 'RETURN').map((r) => r.payload.result), ['echo: are you there'])
  })
})
