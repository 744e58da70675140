// The pure parts of the ACP runtime: the spec's acp block, the ack cursor,
// progress coalescing, verdict → option, the fs sandbox, the bridge's config.
import { strict as assert } from 'node:assert'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadSpecFile, parseSpecText } from '../../src/agents/spec.js'
import { ROOT } from '../utils/hosts.js'
import { bridgeSpec } from '../../src/agents/acp-runtime.js'
import { bridgeConfig } from '../../src/acp/config.js'
import { Sandbox } from '../../src/acp/files.js'
import { AckTracker } from '../../src/acp/journal.js'
import { chooseOption } from '../../src/acp/permissions.js'
import { Progress } from '../../src/acp/progress.js'

function refusal (yaml: string): string {
  try { parseSpecText(yaml, '/base') } catch (err) { return (err as Error).message }
  assert.fail(`accepted:\n${yaml}`)
}

describe('acp units - spec runtime acp', () => {
  it('acp units - runtime acp with defaults; process is the default runtime', () => {
    const { spec } = parseSpecText('name: c\nruntime: acp\ncommand: gemini\nargs: [--acp]\n', '/base')
    assert.equal(spec.runtime, 'acp')
    assert.deepEqual(spec.acp, { permissionTimeoutMs: 300_000, checkpointMs: 2000, checkpointBytes: 4096, fs: 'read-write', retry: 'none', mcp: true })
    assert.equal(parseSpecText('name: c\ncommand: node\n', '/base').spec.runtime, 'process')
    const { spec: s2 } = parseSpecText('name: c\nruntime: acp\ncommand: x\nacp: {approver: ops, permission_timeout: 2s, checkpoint_interval: 500ms, checkpoint_bytes: 1024, fs: none, retry: once, mcp: false}\n', '/base')
    assert.deepEqual(s2.acp, { approver: 'ops', permissionTimeoutMs: 2000, checkpointMs: 500, checkpointBytes: 1024, fs: 'none', retry: 'once', mcp: false })
  })

  const table: Array<[string, string, RegExp]> = [
    ['an unknown runtime', 'name: c\ncommand: x\nruntime: docker\n', /runtime: must be one of process, acp/],
    ['acp on a process spec', 'name: c\ncommand: x\nacp: {fs: none}\n', /acp: is only for runtime: acp/],
    ['an unknown acp field', 'name: c\nruntime: acp\ncommand: x\nacp: {colour: red}\n', /acp\.colour: unknown field/],
    ['a bad fs mode', 'name: c\nruntime: acp\ncommand: x\nacp: {fs: all}\n', /acp\.fs: must be one of read-write, read-only, none/],
    ['a bad retry', 'name: c\nruntime: acp\ncommand: x\nacp: {retry: twice}\n', /acp\.retry: must be one of none, once/],
    ['a bad timeout', 'name: c\nruntime: acp\ncommand: x\nacp: {permission_timeout: soon}\n', /acp\.permission_timeout: must be a duration/]
  ]
  for (const [what, yaml, re] of table) it(`acp units - refuses ${what}`, () => assert.match(refusal(yaml), re))

  it('acp units - the supervised command is the bridge; the bridge reads back what the daemon handed it', () => {
    const { spec } = parseSpecText('name: c\nruntime: acp\ncommand: opencode\nargs: [acp]\ncwd: /w\n', '/base')
    const run = bridgeSpec(spec, '/opt/amesh/bin/amesh', '/home/agents/c')
    assert.deepEqual(run.args, ['/opt/amesh/bin/amesh', 'acp-bridge', '--name', 'c'])
    assert.equal(run.command, process.execPath)
    const cfg = bridgeConfig(run.env)
    assert.deepEqual([cfg.command, cfg.args, cfg.cwd, cfg.dir, cfg.fs], ['opencode', ['acp'], '/w', '/home/agents/c', 'read-write'])
    assert.throws(() => bridgeConfig({}), /AMESH_ACP_CONFIG is not set/)
    const plain = parseSpecText('name: c\ncommand: node\n', '/base').spec
    assert.equal(bridgeSpec(plain, '/b', '/d'), plain)
  })
})

describe('acp units - the example specs', () => {
  for (const [file, command, args] of [['claude-code-acp', 'claude-agent-acp', []], ['gemini-acp', 'gemini', ['--acp']], ['opencode-acp', 'opencode', ['acp']], ['codex-acp', 'codex-acp', []]] as const) {
    it(`acp units - config/examples/${file}.yaml is a valid runtime acp spec`, () => {
      const { spec } = loadSpecFile(join(ROOT, 'config', 'examples', `${file}.yaml`))
      assert.equal(spec.runtime, 'acp')
      assert.deepEqual([spec.command, spec.args], [command, [...args]])
    })
  }
})

describe('acp units - ack cursor', () => {
  it('acp units - the cursor moves only past handled packets, whatever order they finish in', () => {
    const t = new AckTracker()
    for (const s of [3, 4, 5]) t.received(s)
    assert.equal(t.handled(4), undefined) // 3 (a prompt) still runs
    assert.equal(t.handled(3), 4)
    t.received(6)
    assert.equal(t.handled(6), undefined)
    assert.equal(t.handled(5), 6)
  })
})

describe('acp units - progress coalescing', () => {
  it('acp units - updates within the interval become one CHECKPOINT; flush sends what waits; close sends nothing more', async () => {
    const sent: string[] = []
    const p = new Progress({ intervalMs: 60_000, bytes: 4096, promptId: 'P', emit: async (c) => { sent.push(c) } })
    p.chunk('a'); p.chunk('b'); p.event('tool x (edit, pending)')
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(sent.length, 1) // the first goes at once, with all that came in the same tick
    assert.deepEqual(JSON.parse(sent[0]), { acp: 'progress', prompt: 'P', text: 'ab', events: ['tool x (edit, pending)'], dropped_chars: 0 })
    p.chunk('c')
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(sent.length, 1) // within the interval: it waits
    await p.flush()
    assert.equal(sent.length, 2)
    assert.deepEqual(JSON.parse(sent[1]), { acp: 'progress', prompt: 'P', text: 'c', events: [], dropped_chars: 0 })
    p.close()
    p.chunk('late')
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(sent.length, 2)
  })

  it('acp units - a CHECKPOINT stays within its byte bound and counts what it dropped', async () => {
    const sent: string[] = []
    const p = new Progress({ intervalMs: 60_000, bytes: 300, promptId: 'P', emit: async (c) => { sent.push(c) } })
    p.chunk('x'.repeat(5000))
    await p.flush()
    assert.ok(Buffer.byteLength(sent[0]) <= 300)
    const body = JSON.parse(sent[0]) as { text: string, dropped_chars: number }
    assert.equal(body.text.length + body.dropped_chars, 5000)
  })
})

describe('acp units - verdict → permission option', () => {
  const options = [{ optionId: 'ok-1', name: 'Allow', kind: 'allow_once' as const }, { optionId: 'always', name: 'Always', kind: 'allow_always' as const }, { optionId: 'no', name: 'Reject', kind: 'reject_once' as const }]
  it('acp units - allow/deny map to the once kinds; an option id names itself; anything else names none', () => {
    assert.equal(chooseOption(options, 'allow')?.optionId, 'ok-1')
    assert.equal(chooseOption(options, 'approve')?.optionId, 'ok-1')
    assert.equal(chooseOption(options, 'deny')?.optionId, 'no')
    assert.equal(chooseOption(options, 'always')?.optionId, 'always')
    assert.equal(chooseOption(options, 'maybe'), undefined)
    assert.equal(chooseOption(options.slice(0, 2), 'deny'), undefined)
  })
})

describe('acp units - fs sandbox', () => {
  let dir = ''
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'am-acp-fs-'))
    mkdirSync(join(dir, 'root'))
    writeFileSync(join(dir, 'root', 'in.txt'), 'one\ntwo\nthree')
    writeFileSync(join(dir, 'secret.txt'), 'secret')
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'root', 'link.txt'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('acp units - reads inside cwd (with line/limit), refuses outside it, through .. and through a symlink', () => {
    const s = new Sandbox(join(dir, 'root'), 'read-write')
    assert.equal(s.read({ sessionId: 's', path: join(dir, 'root', 'in.txt') }).content, 'one\ntwo\nthree')
    assert.equal(s.read({ sessionId: 's', path: join(dir, 'root', 'in.txt'), line: 2, limit: 1 }).content, 'two')
    for (const path of [join(dir, 'secret.txt'), `${dir}/root/../secret.txt`, join(dir, 'root', 'link.txt'), 'relative.txt']) {
      assert.throws(() => s.read({ sessionId: 's', path }), /outside the node's working directory|must be absolute/)
    }
    s.write({ sessionId: 's', path: join(dir, 'root', 'new.txt'), content: 'n' })
    assert.throws(() => s.write({ sessionId: 's', path: join(dir, 'new.txt'), content: 'n' }), /outside/)
  })

  it('acp units - acp.fs read-only refuses writes; none refuses reads', () => {
    assert.throws(() => new Sandbox(join(dir, 'root'), 'read-only').write({ sessionId: 's', path: join(dir, 'root', 'w.txt'), content: '' }), /acp\.fs: read-only/)
    assert.throws(() => new Sandbox(join(dir, 'root'), 'none').read({ sessionId: 's', path: join(dir, 'root', 'in.txt') }), /acp\.fs: none/)
  })
})
