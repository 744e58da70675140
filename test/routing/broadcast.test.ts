// Broadcast to a group, end to end with real daemons: a parent with five
// children on two hosts (3 + 2, the remote two placed as managed nodes), a
// child broadcasting to its group, a sibling that blocks it, the remote
// members' host killed and restarted while their copies wait, and a
// stranger broadcasting to a group it is not in.
import { strict as assert } from 'node:assert'
import { rmSync } from 'node:fs'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { alive, nodeId, specDir, waitAgent, writeSpec } from '../agents/helpers.js'

interface Member { to: string, to_id: string, state: string, result: string, id?: string, code?: string }
interface Broadcast { id: string, broadcast: string, group: string, members: Member[] }
interface Row { id: string, from: string, signal: string, broadcast?: string, group_id?: string, payload: { text?: string } }

async function copies (h: TestHost, node: string, broadcast: string): Promise<Row[]> {
  const rows = jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
  return rows.filter((r) => r.broadcast === broadcast)
}

function byName (b: Broadcast): Record<string, string> {
  return Object.fromEntries(b.members.map((m) => [m.to, m.result]))
}

describe('routing e2e - broadcast to a group across two hosts', function () {
  this.timeout(180_000)
  let a: TestHost
  let b: TestHost
  let dir: string
  let leadId: string

  before(async () => {
    a = await startHost()
    b = await startHost({ peers: [a.addr] })
    dir = specDir()
    leadId = await nodeId(a, 'lead')
    for (const c of ['c1', 'c2', 'c3']) await nodeId(a, c, 'lead')
    await nodeId(a, 'stranger')
    await waitFor(async () => jsonLines<{ name: string }>(await b.ok(['nodes', '--json'])).some((n) => n.name === 'lead'), 20_000, 'lead known on b')
    await b.ok(['grant', '--host', '--to', 'lead', '--cmd', '/agent/start'])
    for (const c of ['c4', 'c5']) {
      // a member that never reads its inbox: every copy stays there to be counted
      const spec = writeSpec(dir, `${c}.yaml`, { name: c, host: b.peerId, args: ['-e', 'setInterval(() => {}, 1e9)'] })
      await a.ok(['agent', 'start', spec, '--parent', 'lead'])
      await waitAgent(b, c, (x) => x.state === 'running', `${c} running on b`)
    }
    await waitFor(async () => {
      const known = jsonLines<{ name: string, parent?: string }>(await a.ok(['nodes', '--json']))
      return ['c4', 'c5'].every((c) => known.some((n) => n.name === c && n.parent === leadId))
    }, 30_000, 'c4 and c5 cards on a')
    await a.ok(['block', '--as', 'c2', 'c1'])
  })

  after(async () => {
    await b?.cleanup()
    await a?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('parent and siblings each get exactly one copy, the blocking sibling none (refused: BLOCKED), and a restart of the remote members\' host loses nothing', async () => {
    const pid = b.pid
    b.kill9() // the remote members' host is down while the broadcast is made
    await waitFor(async () => !alive(pid), 10_000, 'b\'s daemon gone')
    const r = await a.run(['send', '--as', 'c1', '--to-group', 'standup in 5', '--json'])
    assert.equal(r.code, 1, 'a member refused: exit 1')
    const out = JSON.parse(r.stdout) as Broadcast
    assert.equal(out.group, 'lead')
    assert.deepEqual(byName(out), { c2: 'refused: BLOCKED', c3: 'delivered', c4: 'queued', c5: 'queued', lead: 'delivered' })
    assert.equal(new Set(out.members.filter((m) => m.id !== undefined).map((m) => m.id)).size, 4, 'each copy has its own message id')
    await waitFor(async () => await b.start().then(() => true, () => false), 20_000, 'b restarted')
    for (const [h, node] of [[a, 'lead'], [a, 'c3'], [b, 'c4'], [b, 'c5']] as const) {
      const got = await waitFor(async () => { const c = await copies(h, node, out.broadcast); return c.length > 0 ? c : undefined }, 60_000, `${node}'s copy`)
      assert.equal(got.length, 1, `${node} has exactly one copy`)
      assert.equal(got[0].payload.text, 'standup in 5')
      assert.equal(got[0].from, 'c1')
      assert.equal(got[0].group_id, leadId, 'the copy names the group')
    }
    assert.deepEqual(await copies(a, 'c2', out.broadcast), [], 'the blocking sibling got none')
    // redelivery after the restart added nothing
    await new Promise((resolve) => setTimeout(resolve, 2000))
    for (const [h, node] of [[b, 'c4'], [b, 'c5']] as const) assert.equal((await copies(h, node, out.broadcast)).length, 1)
  })

  it('a broadcast to a group the sender is not in, without grants, is refused per member', async () => {
    const r = await a.run(['send', '--as', 'stranger', '--to-group', 'lead', 'hello?', '--json'])
    assert.equal(r.code, 1, r.stderr)
    assert.notEqual(r.stdout, '', r.stderr)
    const out = JSON.parse(r.stdout) as Broadcast
    assert.deepEqual(byName(out), Object.fromEntries(['c1', 'c2', 'c3', 'c4', 'c5', 'lead'].map((n) => [n, 'refused: NO_GRANT'])))
    for (const node of ['lead', 'c1', 'c3']) assert.deepEqual(await copies(a, node, out.broadcast), [])
  })
})
