import { strict as assert } from 'node:assert'
import { rmSync } from 'node:fs'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { agentRow, agents, alive, inbox, logsOf, nodeId, returns, runAs, specDir, waitAgent, waitLog, waitReturns, writeSpec } from './helpers.js'

interface CardJson { capabilities: { extensions: Array<{ params: { kind: string, parent?: string, issuedAt: number, expiresAt: number } }> }, description: string, skills: Array<{ id: string }> }

async function cardParams (h: TestHost, name: string): Promise<CardJson> {
  return JSON.parse(await h.ok(['card', name, '--json'])) as CardJson
}

describe('agents e2e - managed nodes on one host', function () {
  this.timeout(180_000)
  let h: TestHost
  let dir: string
  let leadId: string
  let spec: string

  before(async () => {
    h = await startHost()
    dir = specDir()
    leadId = await nodeId(h, 'lead')
    await nodeId(h, 'ops')
    spec = writeSpec(dir, 'worker.yaml', { description: 'echo worker', skills: [{ id: 'echo', name: 'echo', description: 'echoes', tags: ['t'] }] })
  })

  after(async () => {
    await h?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('agents e2e - a worker started from a lead: lineage names the lead, the group talks with no grant, outsiders only once comms.allow names them', async () => {
    const w1 = JSON.parse(await h.ok(['agent', 'start', spec, '--parent', 'lead', '--name', 'w1', '--json'])) as { id: string, parent: string, parent_id: string, state: string }
    assert.equal(w1.parent, 'lead')
    assert.equal(w1.parent_id, leadId)
    // AMESH_NODE of the caller makes it the parent, with no --parent
    assert.equal((await runAs(h, 'lead', ['agent', 'start', spec, '--name', 'w2'])).code, 0)
    const nodes = jsonLines<{ name: string, kind: string, parent?: string }>(await h.ok(['nodes', '--json']))
    assert.deepEqual(nodes.filter((n) => n.name === 'w1' || n.name === 'w2').map((n) => [n.name, n.kind, n.parent]).sort(), [['w1', 'managed', leadId], ['w2', 'managed', leadId]])
    const card = await cardParams(h, 'w1')
    assert.equal(card.description, 'echo worker')
    assert.deepEqual(card.skills.map((s) => s.id), ['echo'])
    assert.equal(card.capabilities.extensions[0].params.kind, 'managed')
    assert.equal(card.capabilities.extensions[0].params.parent, leadId)

    await waitLog(h, 'w1', 'following its inbox')
    await waitLog(h, 'w2', 'following its inbox')
    await h.ok(['send', '--as', 'lead', 'w1', 'task for w1'])
    await h.ok(['send', '--as', 'lead', 'w2', 'task for w2'])
    assert.deepEqual(await waitReturns(h, 'lead', 'w1', 1), ['done: task for w1'])
    assert.deepEqual(await waitReturns(h, 'lead', 'w2', 1), ['done: task for w2'])
    // siblings: w1 -> w2, and w2's RETURN comes back to w1
    await h.ok(['send', '--as', 'w1', 'w2', 'hello sibling'])
    await waitLog(h, 'w2', 'got MESSAGE #2 from w1: hello sibling')
    await waitLog(h, 'w1', 'got RETURN #2 from w2: done: hello sibling')

    const denied = await h.run(['send', '--as', 'ops', 'w1', 'let me in'])
    assert.notEqual(denied.code, 0)
    assert.match(denied.stderr, /NO_GRANT/)
    assert.ok(!(await logsOf(h, 'w1')).includes('let me in'))

    // the same node again, with a spec whose comms.allow names ops
    await h.ok(['agent', 'stop', 'w1'])
    const allowSpec = writeSpec(dir, 'allow.yaml', { name: 'w1', comms: { allow: ['ops'] } })
    const again = JSON.parse(await h.ok(['agent', 'start', allowSpec, '--json'])) as { id: string, parent_id: string }
    assert.equal(again.id, w1.id)
    assert.equal(again.parent_id, leadId)
    await h.ok(['send', '--as', 'ops', 'w1', 'let me in'])
    await waitLog(h, 'w1', 'from ops: let me in')
    const grants = JSON.parse(await h.ok(['grants', '--json'])) as { issued: Array<{ issuer: string, audience: string }> }
    assert.equal(grants.issued.filter((g) => g.issuer === 'w1' && g.audience === 'ops').length, 1)
  })

  it('agents e2e - kill -9 of the worker: restarted with the same id and inbox, messages sent while down are answered, ls counts the restart', async () => {
    const before = await waitAgent(h, 'w2', (a) => a.state === 'running' && a.pid !== null, 'w2 running')
    await waitLog(h, 'w2', 'following its inbox')
    const seen = (await returns(h, 'lead', 'w2')).length
    process.kill(before.pid as number, 'SIGKILL')
    await waitAgent(h, 'w2', (a) => a.state === 'backoff', 'w2 in backoff')
    for (const t of ['down-1', 'down-2', 'down-3']) await h.ok(['send', '--as', 'lead', 'w2', t])
    const after = await waitAgent(h, 'w2', (a) => a.state === 'running' && a.restarts === 1, 'w2 restarted')
    assert.equal(after.id, before.id)
    assert.notEqual(after.pid, before.pid)
    assert.ok(!alive(before.pid as number))
    const got = await waitReturns(h, 'lead', 'w2', seen + 3)
    assert.deepEqual(got.slice(seen), ['done: down-1', 'done: down-2', 'done: down-3'])
    await new Promise((resolve) => setTimeout(resolve, 1000))
    assert.equal((await returns(h, 'lead', 'w2')).length, seen + 3, 'each answered once')
  })

  it('agents e2e - agent stop: the process ends, the card is withdrawn, messages queue in its inbox until it starts again', async () => {
    const running = await waitAgent(h, 'w2', (a) => a.state === 'running', 'w2 running')
    const live = (await cardParams(h, 'w2')).capabilities.extensions[0].params
    assert.ok(live.expiresAt - live.issuedAt > 60 * 60 * 1000)
    const stopped = JSON.parse(await h.ok(['agent', 'stop', 'w2', '--json'])) as { state: string, pid: number | null }
    assert.equal(stopped.state, 'stopped')
    assert.equal(stopped.pid, null)
    await waitFor(async () => !alive(running.pid as number), 5000, 'process gone')
    const gone = (await cardParams(h, 'w2')).capabilities.extensions[0].params
    assert.ok(gone.issuedAt > live.issuedAt, 'a newer card replaces the live one')
    assert.ok(gone.expiresAt - gone.issuedAt <= 10_000, 'the withdrawal card lives only seconds')
    const seen = (await returns(h, 'lead', 'w2')).length
    const sent = JSON.parse(await h.ok(['send', '--as', 'lead', 'w2', 'while stopped', '--json'])) as { state: string }
    assert.equal(sent.state, 'delivered')
    assert.deepEqual((await inbox(h, 'w2')).filter((r) => r.payload.text === 'while stopped').length, 1)
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal((await returns(h, 'lead', 'w2')).length, seen, 'nobody answers a stopped node')
    await h.ok(['agent', 'start', spec, '--name', 'w2'])
    assert.deepEqual((await waitReturns(h, 'lead', 'w2', seen + 1)).slice(seen), ['done: while stopped'])
  })

  it('agents e2e - the depth policy refuses a worker starting a worker by default, naming policy.max_depth', async () => {
    const r = await runAs(h, 'w1', ['agent', 'start', spec, '--name', 'sub1'])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /policy\.max_depth is 1; set policy\.max_depth to 2/)
    assert.equal(await agentRow(h, 'sub1'), undefined)
    assert.ok(!jsonLines<{ name: string }>(await h.ok(['nodes', '--json'])).some((n) => n.name === 'sub1'))
  })

  it('agents e2e - an invalid spec is refused naming the field, and nothing is started', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'bad1', command: undefined }, /command: is required/],
      [{ name: 'bad2', restart: { policy: 'sometimes' } }, /restart\.policy: must be one of never, on-failure, always/],
      [{ name: 'bad3', colour: 'blue' }, /colour: unknown field/]
    ]
    for (const [fields, re] of cases) {
      const r = await h.run(['agent', 'start', writeSpec(dir, `${String(fields.name)}.yaml`, fields), '--parent', 'lead'])
      assert.notEqual(r.code, 0)
      assert.match(r.stderr, re)
      assert.equal(r.stderr.trim().split('\n').length, 1)
    }
    const names = (await agents(h)).map((a) => a.name)
    assert.deepEqual(names.filter((n) => n.startsWith('bad')), [])
    assert.ok(!jsonLines<{ name: string }>(await h.ok(['nodes', '--json'])).some((n) => n.name.startsWith('bad')))
  })

  it('agents e2e - a daemon restart brings the managed nodes back (stopped ones stay stopped)', async () => {
    await h.ok(['agent', 'stop', 'w1'])
    const before = await waitAgent(h, 'w2', (a) => a.state === 'running', 'w2 running')
    await h.stop()
    await waitFor(async () => !alive(before.pid as number), 10_000, 'the worker ended with the daemon')
    await h.start()
    const after = await waitAgent(h, 'w2', (a) => a.state === 'running' && a.pid !== before.pid, 'w2 back')
    assert.equal(after.id, before.id)
    assert.equal(after.parent_id, leadId)
    assert.equal((await agentRow(h, 'w1'))?.state, 'stopped')
    const seen = (await returns(h, 'lead', 'w2')).length
    await h.ok(['send', '--as', 'lead', 'w2', 'after restart'])
    assert.deepEqual((await waitReturns(h, 'lead', 'w2', seen + 1)).slice(seen), ['done: after restart'])
  })
})

describe('agents e2e - raised depth policy', function () {
  this.timeout(60_000)
  let h: TestHost
  let dir: string
  after(async () => {
    await h?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('agents e2e - with policy.max_depth 2 a worker starts a worker, which is its child', async () => {
    h = await startHost({ config: { policy: { max_depth: 2 } } })
    dir = specDir()
    const spec = writeSpec(dir, 'w.yaml')
    await nodeId(h, 'lead')
    const w = JSON.parse(await h.ok(['agent', 'start', spec, '--parent', 'lead', '--name', 'mid', '--json'])) as { id: string }
    const r = await runAs(h, 'mid', ['agent', 'start', spec, '--name', 'leaf', '--json'])
    assert.equal(r.code, 0, r.stderr)
    const sub = JSON.parse(r.stdout) as { parent_id: string, parent: string }
    assert.equal(sub.parent_id, w.id)
    assert.equal(sub.parent, 'mid')
    await waitLog(h, 'leaf', 'following its inbox')
    await h.ok(['send', '--as', 'mid', 'leaf', 'deep task'])
    assert.deepEqual(await waitReturns(h, 'mid', 'leaf', 1), ['done: deep task'])
  })
})
