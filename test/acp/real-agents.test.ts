// Real ACP agents through amesh, when one is installed here: Claude Code's ACP
// adapter (@agentclientprotocol/claude-agent-acp). Found through
// AMESH_TEST_CLAUDE_ACP (a path; likewise AMESH_TEST_GEMINI, AMESH_TEST_OPENCODE);
// skipped with the reason otherwise. Without credentials the agent cannot run a prompt: the
// test then shows it got as far as initialize and session/new and skips with
// what the agent said.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { acpRow, sendId } from './helpers.js'

interface RealAgent { env: string, name: string, args: string[], install: string }

// Opt-in only (a real agent talks to its provider, and tests send traffic to loopback only):
// set the variable to the agent's executable to run its test.
const AGENTS: RealAgent[] = [
  { env: 'AMESH_TEST_CLAUDE_ACP', name: 'claude', args: [], install: 'npm install @agentclientprotocol/claude-agent-acp (bin claude-agent-acp)' },
  { env: 'AMESH_TEST_GEMINI', name: 'gemini', args: ['--acp'], install: 'npm install @google/gemini-cli (bin gemini)' },
  { env: 'AMESH_TEST_OPENCODE', name: 'opencode', args: ['acp'], install: 'npm install opencode-ai (bin opencode)' }
]

describe('acp - real agents through amesh (opt-in, when installed)', function () {
  this.timeout(180_000)
  let h: TestHost | undefined
  let dir = ''

  after(async () => {
    await h?.cleanup()
    if (dir !== '') rmSync(dir, { recursive: true, force: true })
  })

  for (const agent of AGENTS) {
    it(`acp - ${agent.name} reaches initialize and session/new through amesh`, async function () {
      const bin = process.env[agent.env]
      if (bin === undefined || bin === '') {
        console.log(`      (skipped: set ${agent.env} to the agent's executable; ${agent.install})`)
        this.skip()
      }
      h ??= await startHost()
      dir = dir === '' ? mkdtempSync(join(tmpdir(), 'am-acp-real-')) : dir
      await h.ok(['node', 'add', `lead-${agent.name}`])
      const spec = join(dir, `${agent.name}.yaml`)
      writeFileSync(spec, JSON.stringify({ name: agent.name, runtime: 'acp', command: bin, args: agent.args, cwd: dir, restart: { policy: 'never' }, acp: { permission_timeout: '30s' } }))
      await h.ok(['agent', 'start', spec, '--parent', `lead-${agent.name}`])
      const host = h
      const row = await waitFor(async () => { const a = await acpRow(host, agent.name); return typeof a?.acp?.agent === 'string' ? a : undefined }, 60_000, 'initialize answered')
      console.log(`      initialize: agent ${String(row.acp?.agent)} ${String(row.acp?.version)}`)
      assert.ok(typeof row.acp?.agent === 'string' && row.acp.agent !== '')
      await sendId(h, `lead-${agent.name}`, agent.name, 'Reply with the two words: hello mesh')
      const line = await waitFor(async () => (await host.ok(['agent', 'logs', agent.name])).split('\n').find((l) => / session\/new /.test(l)), 120_000, 'session/new answered')
      console.log(`      ${line.replace(/^\S+ \S+ /, '')}`)
      if (line.includes('session/new failed')) {
        console.log('      (skipped after session/new: the agent cannot start a session without credentials here)')
        this.skip()
      }
      const result = await waitFor(async () => (await host.ok(['inbox', `lead-${agent.name}`, '--json', '--after', '0'])).split('\n').find((l) => /"signal":"(RETURN|ERROR)"/.test(l)), 120_000, 'the prompt answered')
      console.log(`      reply: ${result.slice(0, 300)}`)
    })
  }
})
