// Real ACP agents through amesh, when one is installed here: Claude Code's ACP
// adapter (@agentclientprotocol/claude-agent-acp). Found through
// AMESH_TEST_CLAUDE_ACP (a path), else `claude-agent-acp` on PATH; skipped with
// the reason otherwise. Without credentials the agent cannot run a prompt: the
// test then shows it got as far as initialize and session/new and skips with
// what the agent said.
import { strict as assert } from 'node:assert'
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { nodeId } from '../agents/helpers.js'
import { acpRow, sendId } from './helpers.js'

function findOnPath (name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try { accessSync(join(dir, name), constants.X_OK); return join(dir, name) } catch { /* next */ }
  }
  return undefined
}

describe('acp - real agents through amesh (when installed)', function () {
  this.timeout(180_000)
  const bin = process.env.AMESH_TEST_CLAUDE_ACP ?? findOnPath('claude-agent-acp')
  let h: TestHost | undefined
  let dir = ''

  after(async () => {
    await h?.cleanup()
    if (dir !== '') rmSync(dir, { recursive: true, force: true })
  })

  it('acp - claude-agent-acp reaches initialize and session/new through amesh', async function () {
    if (bin === undefined) {
      console.log('      (skipped: claude-agent-acp is not installed; npm install @agentclientprotocol/claude-agent-acp and set AMESH_TEST_CLAUDE_ACP to its bin)')
      this.skip()
    }
    h = await startHost()
    dir = mkdtempSync(join(tmpdir(), 'am-acp-real-'))
    await nodeId(h, 'lead')
    const spec = join(dir, 'claude.yaml')
    writeFileSync(spec, JSON.stringify({ name: 'claude', runtime: 'acp', command: bin, cwd: dir, restart: { policy: 'never' }, acp: { permission_timeout: '30s' } }))
    await h.ok(['agent', 'start', spec, '--parent', 'lead'])
    const host = h
    const row = await waitFor(async () => { const a = await acpRow(host, 'claude'); return a?.acp?.agent !== undefined && a.acp.agent !== null ? a : undefined }, 60_000, 'initialize answered')
    console.log(`      initialize: agent ${String(row.acp?.agent)} ${String(row.acp?.version)}`)
    assert.equal(row.acp?.agent, '@agentclientprotocol/claude-agent-acp')
    await sendId(h, 'lead', 'claude', 'Reply with the two words: hello mesh')
    const line = await waitFor(async () => (await host.ok(['agent', 'logs', 'claude'])).split('\n').find((l) => / session\/new /.test(l)), 120_000, 'session/new answered')
    console.log(`      ${line.replace(/^\S+ \S+ /, '')}`)
    if (line.includes('session/new failed')) {
      console.log('      (skipped after session/new: the agent cannot start a Claude Code session without credentials here)')
      this.skip()
    }
    const result = await waitFor(async () => (await host.ok(['inbox', 'lead', '--json', '--after', '0'])).split('\n').find((l) => /"signal":"(RETURN|ERROR)"/.test(l)), 120_000, 'the prompt answered')
    console.log(`      reply: ${result.slice(0, 300)}`)
  })
})
