import { strict as assert } from 'node:assert'
import { rmSync } from 'node:fs'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { agentRow, agents, alive, logsOf, nodeId, returns, specDir, waitAgent, waitLog, waitReturns, writeSpec } from './helpers.js'

describe('agents e2e - remote placement across two hosts', function () {
  this.timeout(120_000)
  let a: TestHost
  let b: TestHost
  let dir: string
  let leadId: string

  before(async () => {
    a = await startHost()
    b = await startHost({ peers: [a.addr] })
    dir = specDir()
    leadId = await nodeId(a, 'lead')
    await nodeId(a, 'other')
    // b knows lead's card (exchanged on connect / on node add)
    await waitFor(async () => jsonLines<{ name: string }>(await b.ok(['nodes', '--json'])).some((n) => n.name === 'lead'), 20_000, 'lead known on b')
  })

  after(async () => {
    await b?.cleanup()
    await a?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('agents e2e - refused without the host grant (clear reason, nothing runs there); works with it; lead and remote worker talk under the group rule', async () => {
    const spec = writeSpec(dir, 'remote.yaml', { name: 'rw', host: b.peerId })
    const refused = await a.run(['agent', 'start', spec, '--parent', 'lead'])
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /NO_HOST_GRANT|refused \/agent\/start for lead/)
    assert.match(refused.stderr, /amesh grant --host --to lead --cmd \/agent\/start/)
    assert.deepEqual(await agents(b), [])
    assert.ok(!jsonLines<{ name: string }>(await b.ok(['nodes', '--json'])).some((n) => n.name === 'rw'))

    // a grant to another node does not let lead place nodes
    await b.ok(['grant', '--host', '--to', 'other', '--cmd', '/agent/start'])
    assert.notEqual((await a.run(['agent', 'start', spec, '--parent', 'lead'])).code, 0)

    const g = JSON.parse(await b.ok(['grant', '--host', '--to', 'lead', '--cmd', '/agent/start', '--json'])) as { handed: boolean, cmd: string }
    assert.equal(g.handed, true)
    assert.equal(g.cmd, '/agent/start')
    const placed = JSON.parse(await a.ok(['agent', 'start', spec, '--parent', 'lead', '--json'])) as { id: string, host: string, state: string }
    assert.equal(placed.host, b.peerId)
    assert.equal(placed.state, 'remote')

    // it lives and is supervised on b, its parent is lead (on a)
    const there = await waitAgent(b, 'rw', (x) => x.state === 'running', 'rw running on b')
    assert.equal(there.id, placed.id)
    assert.equal(there.parent_id, leadId)
    assert.equal((await agentRow(a, 'rw'))?.state, 'remote')
    const onA = await waitFor(async () => jsonLines<{ name: string, parent?: string, kind: string, local: boolean }>(await a.ok(['nodes', '--json'])).find((n) => n.name === 'rw'), 20_000, 'rw card on a')
    assert.equal(onA.parent, leadId)
    assert.equal(onA.kind, 'managed')
    assert.equal(onA.local, false)

    await waitLog(b, 'rw', 'following its inbox')
    await a.ok(['send', '--as', 'lead', 'rw', 'cross-host task'])
    assert.deepEqual(await waitReturns(a, 'lead', 'rw', 1, 30_000), ['done: cross-host task'])
    // a node of a outside the group is still refused by the group rule
    const stranger = await a.run(['send', '--as', 'other', 'rw', 'hi'])
    assert.notEqual(stranger.code, 0)
    assert.match(stranger.stderr, /NO_GRANT/)
    assert.ok(!(await logsOf(b, 'rw')).includes('from other'))
  })

  it('agents e2e - the parent\'s host stops the remote node; its process ends there', async () => {
    const there = await waitAgent(b, 'rw', (x) => x.state === 'running', 'rw running on b')
    const r = JSON.parse(await a.ok(['agent', 'stop', 'rw', '--json'])) as { state: string }
    assert.equal(r.state, 'stopped')
    assert.equal((await agentRow(b, 'rw'))?.state, 'stopped')
    await waitFor(async () => !alive(there.pid as number), 10_000, 'remote process gone')
    assert.equal((await returns(a, 'lead', 'rw')).length, 1)
  })
})
