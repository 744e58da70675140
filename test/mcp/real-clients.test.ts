// Real MCP clients attach to `amesh mcp` and read nothing: the MCP Inspector
// CLI (tools/list, status) and Claude Code's health check (`claude mcp list`).
// Both are installed on demand outside the project (test/mcp/on-demand.ts).
import { strict as assert } from 'node:assert'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { amesh, BIN, inbox, inboxInfo, makeHome, startHost, stopHost } from './harness.js'
import { installOnDemand, run, type Installed } from './on-demand.js'

describe('mcp - real clients read nothing', function () {
  this.timeout(15 * 60_000)
  let a = ''
  const temps: string[] = []
  // both clients are installed (on a clean machine: downloaded) side by side from the
  // start, so Claude Code's install runs while the Inspector test does; each test
  // awaits its own, exactly as before
  let inspector: Promise<Installed> | undefined
  let claude: Promise<Installed> | undefined

  async function waiting (from: string, to: string, n: number): Promise<void> {
    for (const x of [from, to]) await amesh(['node', 'add', x, '--home', a])
    await amesh(['grant', '--as', to, '--to', from, '--home', a])
    await amesh(['send', '--as', from, to, '-', '--home', a], { input: Array.from({ length: n }, (_, i) => `waiting ${i + 1}`).join('\n') + '\n' })
    assert.deepEqual(await inboxInfo(a, to), { last: n, cursor: 0, unacked: n })
  }

  before(async () => {
    inspector = installOnDemand('inspector', '@modelcontextprotocol/inspector', 'mcp-inspector')
    claude = installOnDemand('claude-code', '@anthropic-ai/claude-code', 'claude')
    a = makeHome()
    await startHost(a)
  })

  after(async () => {
    await stopHost(a)
    for (const t of temps) rmSync(t, { recursive: true, force: true })
  })

  it('inspector - tools/list and status ten times: nothing is read', async function () {
    const got = await (inspector ?? installOnDemand('inspector', '@modelcontextprotocol/inspector', 'mcp-inspector'))
    if ('skip' in got) { console.log(`      skipped: ${got.skip}`); this.skip() }
    await waiting('isrc', 'inspected', 15)
    const server = [process.execPath, BIN, 'mcp', '--name', 'inspected', '--home', a]
    for (let i = 0; i < 10; i++) {
      const list = await run(got.bin, ['--cli', ...server, '--method', 'tools/list'])
      assert.equal(list.code, 0, list.stderr)
      assert.match(list.stdout, /"name": "status"/)
      const status = await run(got.bin, ['--cli', ...server, '--method', 'tools/call', '--tool-name', 'status'])
      assert.equal(status.code, 0, status.stderr)
      assert.match(status.stdout, /unread/)
    }
    assert.deepEqual(await inboxInfo(a, 'inspected'), { last: 15, cursor: 0, unacked: 15 })
    assert.equal((await inbox(a, 'inspected')).length, 15)
  })

  it('claude code - `claude mcp list` three times reports amesh connected; all 20 stay unread', async function () {
    const got = await (claude ?? installOnDemand('claude-code', '@anthropic-ai/claude-code', 'claude'))
    if ('skip' in got) { console.log(`      skipped: ${got.skip}`); this.skip() }
    await waiting('csrc', 'lead', 20)
    const project = mkdtempSync(join(tmpdir(), 'am-cc-'))
    temps.push(project)
    await amesh(['mcp', 'install', '--name', 'lead', '--home', a], { cwd: project })
    mkdirSync(join(project, '.claude'))
    writeFileSync(join(project, '.claude', 'settings.local.json'), JSON.stringify({ enabledMcpjsonServers: ['amesh'] }))
    // Claude Code applies a project's .claude/settings.local.json only in a trusted folder
    // (without this, `claude mcp list` says "Pending approval" and starts nothing)
    const config = join(project, 'claude-config')
    mkdirSync(config)
    writeFileSync(join(config, '.claude.json'), JSON.stringify({ projects: { [project]: { hasTrustDialogAccepted: true } } }))
    const env = { PATH: process.env.PATH ?? '', HOME: project, CLAUDE_CONFIG_DIR: config, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', AMESH_MDNS: 'off' }
    for (let i = 0; i < 3; i++) {
      const r = await run(got.bin, ['mcp', 'list'], { cwd: project, env })
      assert.equal(r.code, 0, `claude mcp list exited ${String(r.code)}: ${r.stdout}${r.stderr}`)
      assert.match(r.stdout, /amesh:.*Connected/, `claude mcp list printed: ${r.stdout}${r.stderr}`)
    }
    assert.deepEqual(await inboxInfo(a, 'lead'), { last: 20, cursor: 0, unacked: 20 })
    const listed = await inbox(a, 'lead')
    assert.deepEqual(listed.map((p) => p.payload.text), Array.from({ length: 20 }, (_, i) => `waiting ${i + 1}`))
  })
})
