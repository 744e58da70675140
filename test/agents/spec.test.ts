import { strict as assert } from 'node:assert'
import { join } from 'node:path'
import { loadSpecFile, parseSpecText } from '../../src/agents/spec.js'
import { ROOT } from '../utils/hosts.js'

function refusal (yaml: string): string {
  try {
    parseSpecText(yaml, '/base')
  } catch (err) {
    assert.equal((err as Error).name, 'SpecError')
    return (err as Error).message
  }
  assert.fail(`spec was accepted:\n${yaml}`)
}

describe('agents spec - validation', () => {
  const table: Array<[string, string, RegExp]> = [
    ['missing command', 'name: w\n', /command: is required/],
    ['bad restart policy', 'name: w\ncommand: node\nrestart: {policy: sometimes}\n', /restart\.policy: must be one of never, on-failure, always/],
    ['unknown top-level field', 'name: w\ncommand: node\ncolour: blue\n', /colour: unknown field/],
    ['unknown nested field', 'name: w\ncommand: node\nrestart: {policy: always, retries: 3}\n', /restart\.retries: unknown field/],
    ['missing name', 'command: node\n', /name: is required/],
    ['bad name', 'name: "has space"\ncommand: node\n', /name: invalid node name/],
    ['bad duration', 'name: w\ncommand: node\nstop_timeout: soon\n', /stop_timeout: must be a duration/],
    ['args not a list', 'name: w\ncommand: node\nargs: {a: 1}\n', /args: must be a list of strings/],
    ['bad env name', 'name: w\ncommand: node\nenv: {"1X": y}\n', /env\.1X: is not a valid variable name/],
    ['bad allow signal', 'name: w\ncommand: node\ncomms: {allow: [{node: ops, signals: [SHOUT]}]}\n', /comms\.allow\[0\]\.signals: unknown value SHOUT/],
    ['bad profile', 'name: w\ncommand: node\ncomms: {profile: {colour: red}}\n', /comms\.profile: profile: unknown field colour/],
    ['unknown health field', 'name: w\ncommand: node\nhealth: {ping: 1s}\n', /health\.ping: unknown field/],
    ['not a map', '- a\n- b\n', /must hold a map/],
    ['not yaml', 'name: [unclosed\n', /not valid YAML/]
  ]
  for (const [what, yaml, re] of table) {
    it(`agents spec - refuses ${what}, naming the field`, () => {
      assert.match(refusal(yaml), re)
    })
  }

  it('agents spec - normalises defaults, durations, skills, allow entries and cwd', () => {
    const { spec } = parseSpecText([
      'name: w1', 'command: node', 'args: [a.js, 3]', 'cwd: sub', 'skills: [echo]',
      'restart: {policy: always, backoff: 250ms, backoff_max: 2s, max_restarts: 2, window: 1m}',
      'health: {heartbeat: 5s}', 'comms: {allow: [ops, {node: aud, signals: [message], zones: [Project]}], profile: {signals: [MESSAGE, RETURN]}}'
    ].join('\n'), '/base')
    assert.deepEqual(spec.args, ['a.js', '3'])
    assert.equal(spec.cwd, '/base/sub')
    assert.deepEqual(spec.restart, { policy: 'always', backoffMs: 250, backoffMaxMs: 2000, maxRestarts: 2, windowMs: 60_000 })
    assert.equal(spec.heartbeatMs, 5000)
    assert.deepEqual(spec.skills, [{ id: 'echo', name: 'echo', description: 'echo', tags: [] }])
    assert.deepEqual(spec.allow, [{ node: 'ops' }, { node: 'aud', signals: ['MESSAGE'], zones: ['project'] }])
    assert.deepEqual(spec.profile, { signals: ['MESSAGE', 'RETURN'] })
  })

  it('agents spec - --name overrides the spec name; the example specs in config/ are valid', () => {
    assert.equal(parseSpecText('name: a\ncommand: x\n', '/', 'b').spec.name, 'b')
    const example = loadSpecFile(join(ROOT, 'config', 'worker.example.yaml'))
    assert.equal(example.spec.name, 'example-worker')
    assert.equal(example.spec.cwd, join(ROOT, 'config'))
    assert.equal(example.spec.restart.policy, 'on-failure')
    assert.equal(loadSpecFile(join(ROOT, 'config', 'remote-worker.example.yaml')).spec.host?.startsWith('12D3KooW'), true)
  })
})
