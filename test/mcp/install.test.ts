import { strict as assert } from 'node:assert'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { amesh, makeHome, Session, stopHost } from './harness.js'

describe('mcp - amesh mcp install', function () {
  this.timeout(60_000)
  let dir = ''
  let home = ''

  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'am-proj-')) })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  after(async () => { if (home !== '') await stopHost(home) })

  it('mcp install - writes a valid .mcp.json, keeps other servers, prints the claude command', async () => {
    const other = { command: 'other-server', args: ['--x'], env: { A: '1' } }
    writeFileSync(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { other }, note: 'kept' }, null, 2))
    home = makeHome()
    const out = await amesh(['mcp', 'install', '--name', 'lead', '--home', home], { cwd: dir })
    assert.match(out, /claude --dangerously-load-development-channels server:amesh/)
    const cfg = JSON.parse(readFileSync(join(dir, '.mcp.json'), 'utf8')) as { note: string, mcpServers: Record<string, { command: string, args: string[] }> }
    assert.equal(cfg.note, 'kept')
    assert.deepEqual(cfg.mcpServers.other, other)
    const entry = cfg.mcpServers.amesh
    assert.ok(entry.args.includes('mcp'))
    assert.deepEqual(entry.args.slice(entry.args.indexOf('--name'), entry.args.indexOf('--name') + 2), ['--name', 'lead'])

    // again with other flags: the entry is updated, not duplicated
    await amesh(['mcp', 'install', '--name', 'lead', '--home', home, '--permission-relay', '--approver', 'boss'], { cwd: dir })
    const again = JSON.parse(readFileSync(join(dir, '.mcp.json'), 'utf8')) as typeof cfg
    assert.deepEqual(Object.keys(again.mcpServers).sort(), ['amesh', 'other'])
    assert.ok(again.mcpServers.amesh.args.includes('--permission-relay'))

    // the entry works as written: Claude Code would spawn exactly this (and it starts the daemon)
    await amesh(['mcp', 'install', '--name', 'lead', '--home', home], { cwd: dir })
    const final = (JSON.parse(readFileSync(join(dir, '.mcp.json'), 'utf8')) as typeof cfg).mcpServers.amesh
    const s = await Session.start(home, [], final)
    try {
      assert.deepEqual(s.client.getServerCapabilities()?.experimental?.['claude/channel'], {})
      const tools = (await s.client.listTools()).tools.map((t) => t.name).sort()
      assert.deepEqual(tools, ['ack', 'approve', 'broadcast', 'deny', 'grant', 'inbox', 'nodes', 'receipt', 'reply', 'revoke', 'send', 'spawn', 'status'])
    } finally {
      await s.close()
    }
  })

  it('mcp install - creates .mcp.json when there is none, refuses a broken one', async () => {
    await amesh(['mcp', 'install', '--name', 'x', '--portable'], { cwd: dir })
    const cfg = JSON.parse(readFileSync(join(dir, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { command: string, args: string[] }> }
    assert.deepEqual(cfg.mcpServers.amesh, { command: 'amesh', args: ['mcp', '--name', 'x'] })
    writeFileSync(join(dir, '.mcp.json'), '{ not json')
    await assert.rejects(amesh(['mcp', 'install', '--name', 'x'], { cwd: dir }), /not valid JSON/)
    assert.equal(readFileSync(join(dir, '.mcp.json'), 'utf8'), '{ not json')
  })
})
