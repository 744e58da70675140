// `amesh mcp --tools-only`: the MCP server listed in an ACP agent's session/new.
// Its tools work, but it announces no channel and never consumes the node's
// inbox (the ACP bridge is that inbox's only consumer).
import { strict as assert } from 'node:assert'
import { rmSync } from 'node:fs'
import { Session, amesh, inbox, inboxInfo, makeHome, sleep, startHost, stopHost, textOf } from '../mcp/harness.js'

describe('acp - amesh mcp --tools-only', function () {
  this.timeout(60_000)
  let home = ''
  let s: Session | undefined

  before(async () => {
    home = makeHome()
    await startHost(home)
    await amesh(['node', 'add', 'lead', '--home', home])
    await amesh(['node', 'add', 'tool-user', '--parent', 'lead', '--home', home])
  })

  after(async () => {
    await s?.close()
    await stopHost(home).catch(() => {})
    rmSync(home, { recursive: true, force: true })
  })

  it('acp - tools answer; no claude/channel capability; packets for the node stay unacked and are not pushed', async () => {
    s = await Session.start(home, ['--name', 'tool-user', '--tools-only'])
    const caps = s.client.getServerCapabilities()
    assert.equal(caps?.experimental?.['claude/channel'], undefined)
    assert.ok((await s.client.listTools()).tools.some((t) => t.name === 'send'))
    const sent = await s.tool('send', { to: 'lead', text: 'from the tools' })
    assert.match(textOf(sent), /delivered/)
    assert.deepEqual((await inbox(home, 'lead')).filter((p) => p.payload.text === 'from the tools').map((p) => p.from), ['tool-user'])
    await amesh(['send', '--as', 'lead', 'tool-user', 'for the bridge', '--home', home])
    await sleep(1500)
    assert.equal(s.channel.length, 0)
    assert.deepEqual(s.methods, [])
    // the tools that read in a full session mark nothing here: the bridge is the inbox's only consumer
    assert.equal((await s.client.listTools()).tools.some((t) => t.name === 'ack'), false)
    const listed = JSON.parse(textOf(await s.tool('inbox', {}))) as Array<{ content: string, msg_id: string }>
    assert.deepEqual(listed.map((p) => p.content), ['for the bridge'])
    assert.match(textOf(await s.tool('reply', { msg_id: listed[0].msg_id, text: 'seen' })), /delivered/)
    const info = await inboxInfo(home, 'tool-user')
    assert.equal(info?.cursor, 0)
    assert.equal(info?.unacked, 1)
  })
})
