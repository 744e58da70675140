// A structured SPAWN end to end: sent by an MCP session (the SDK client
// playing Claude Code) with an object context, it arrives byte-identical in
// the child's `inbox --json` and in the child's channel as compact JSON,
// with the broadcast marker in the meta of a broadcast copy.
import { strict as assert } from 'node:assert'
import { rmSync } from 'node:fs'
import { amesh, makeHome, Session, startHost, stopHost, textOf } from './harness.js'

describe('mcp - structured payloads and broadcast through real sessions', function () {
  this.timeout(120_000)
  let home: string
  const sessions: Session[] = []

  before(async () => {
    home = makeHome()
    await startHost(home)
    await amesh(['node', 'add', 'lead', '--home', home])
    await amesh(['node', 'add', 'kid', '--parent', 'lead', '--home', home])
  })

  after(async () => {
    for (const s of sessions) await s.close()
    await stopHost(home)
    rmSync(home, { recursive: true, force: true })
  })

  it('a SPAWN with context {files, notes} round-trips through the MCP send tool, inbox --json and the child\'s channel; a broadcast copy carries its marker', async () => {
    const lead = await Session.start(home, ['--name', 'lead'])
    sessions.push(lead)
    const context = { files: ['src/a.ts', 'src/b.ts'], notes: { why: 'refactor', steps: [1, 2, { last: true }], owner: null } }
    const sent = await lead.tool('send', { to: 'kid', signal: 'SPAWN', context, text: 'job-1' })
    assert.equal(sent.isError, undefined, textOf(sent))
    const rows = JSON.parse(`[${(await amesh(['inbox', 'kid', '--json', '--after', '0', '--home', home])).trim().split('\n').join(',')}]`) as Array<{ signal: string, payload: { context?: unknown } }>
    const spawn = rows.find((r) => r.signal === 'SPAWN')
    assert.ok(spawn !== undefined)
    assert.deepEqual(spawn.payload.context, context, 'inbox --json gives the object')
    assert.equal(JSON.stringify(spawn.payload.context), JSON.stringify({ files: context.files, notes: { why: 'refactor', owner: null, steps: [1, 2, { last: true }] } }), 'keys in canonical order')
    const kid = await Session.start(home, ['--name', 'kid'])
    sessions.push(kid)
    const [ev] = await kid.waitChannel(1)
    assert.equal(ev.meta?.signal, 'SPAWN')
    assert.ok(ev.content.includes(`context: ${JSON.stringify(spawn.payload.context)}`), ev.content)
    const b = await kid.tool('broadcast', { text: 'hello group' })
    assert.equal(b.isError, undefined, textOf(b))
    const result = JSON.parse(textOf(b)) as { broadcast: string, members: Array<{ to: string, result: string }> }
    assert.deepEqual(result.members.map((m) => [m.to, m.result]), [['lead', 'delivered']])
    const [copy] = await lead.waitChannel(1)
    assert.equal(copy.meta?.broadcast, result.broadcast)
    assert.equal(copy.content, 'hello group')
  })
})
