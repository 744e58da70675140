import { strict as assert } from 'node:assert'
import { rmSync } from 'node:fs'
import { Session, textOf } from '../mcp/harness.js'
import { startHost, type TestHost } from '../utils/hosts.js'
import { agentRow, specDir, waitLog, writeSpec } from './helpers.js'

describe('agents e2e - the MCP spawn tool', function () {
  this.timeout(60_000)
  let h: TestHost
  let dir: string
  let session: Session | undefined

  after(async () => {
    await session?.close()
    await h?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('agents e2e - a session spawns a worker with itself as parent and gets its RETURN as a channel event', async () => {
    h = await startHost()
    dir = specDir()
    const spec = writeSpec(dir, 'w.yaml')
    session = await Session.start(h.home, ['--name', 'lead'])
    const r = await session.tool('spawn', { spec, name: 'mw' })
    assert.notEqual(r.isError, true, textOf(r))
    const started = JSON.parse(textOf(r)) as { name: string, parent: string }
    assert.equal(started.name, 'mw')
    assert.equal(started.parent, 'lead')
    assert.equal((await agentRow(h, 'mw'))?.parent, 'lead')
    await waitLog(h, 'mw', 'following its inbox')
    const sent = await session.tool('send', { to: 'mw', text: 'via mcp' })
    assert.notEqual(sent.isError, true, textOf(sent))
    const events = await session.waitChannel(1)
    const ret = events.find((e) => e.meta?.signal === 'RETURN')
    assert.ok(ret !== undefined, JSON.stringify(events))
    assert.equal(ret.meta?.from, 'mw')
    assert.match(ret.content, /done: via mcp/)
    const bad = await session.tool('spawn', { spec: writeSpec(dir, 'bad.yaml', { colour: 'x' }) })
    assert.equal(bad.isError, true)
    assert.match(textOf(bad), /INVALID_SPEC: invalid spec: colour: unknown field/)
  })
})
