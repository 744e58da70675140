/**
 * The import rules of issue 12 (item 9), written in .dependency-cruiser.cjs and
 * checked here with dependency-cruiser's API on the .ts sources of src/ (type-only
 * imports included). One test per rule, each listing every violation it finds.
 *
 * A second block runs the same rules on a small tree of fixture files, one
 * deliberate violation per rule, so a rule that silently stopped matching (a
 * renamed folder, a broken regular expression) fails here too.
 */
import { strict as assert } from 'node:assert'
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cruise, type IConfiguration, type ICruiseResult, type IViolation } from 'dependency-cruiser'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'

// dist/test/infra/ → the repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const CONFIG = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as IConfiguration
const RULES = CONFIG.forbidden ?? []

async function cruiseTree (baseDir: string): Promise<ICruiseResult> {
  const reply = await cruise(['src'], {
    ...CONFIG.options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: RULES }
  }, undefined, { tsConfig: extractTSConfig(join(baseDir, 'tsconfig.json')) })
  if (typeof reply.output === 'string') throw new Error('dependency-cruiser returned text, not a result')
  return reply.output
}

function describeViolation (v: IViolation): string {
  if (v.cycle !== undefined && v.cycle.length > 0) {
    return `${v.from} → ${v.cycle.map((step) => step.name).join(' → ')}`
  }
  const types = v.dependencyTypes?.includes('type-only') === true ? ' (type-only)' : ''
  return `${v.from} → ${v.to}${types}`
}

function violationsOf (result: ICruiseResult, rule: string): string[] {
  return result.summary.violations.filter((v) => v.rule.name === rule).map(describeViolation)
}

function countTsFiles (dir: string): number {
  let n = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) n += countTsFiles(join(dir, entry.name))
    else if (entry.name.endsWith('.ts')) n++
  }
  return n
}

describe('infra - import rules (dependency-cruiser on src/)', function () {
  this.timeout(120_000)
  let result: ICruiseResult

  before(async () => { result = await cruiseTree(ROOT) })

  it('cruises every .ts file in src/ and resolves .js specifiers to the .ts sources', () => {
    const seen = result.modules.filter((m) => m.source.startsWith('src/') && m.source.endsWith('.ts'))
    assert.equal(seen.length, countTsFiles(join(ROOT, 'src')))
    const main = result.modules.find((m) => m.source === 'src/cli/main.ts')
    assert.ok(main !== undefined, 'src/cli/main.ts was not cruised')
    assert.ok(main.dependencies.some((d) => d.resolved.startsWith('src/') && d.resolved.endsWith('.ts')),
      'no import of src/cli/main.ts resolved to a .ts source: every rule would pass vacuously')
  })

  for (const rule of RULES) {
    it(`${rule.name ?? '(unnamed rule)'}`, () => {
      const found = violationsOf(result, rule.name ?? '')
      if (found.length > 0) {
        assert.fail(`${found.length} violation(s) of ${rule.name ?? ''}: ${rule.comment ?? ''}\n  ${found.join('\n  ')}`)
      }
    })
  }
})

// One file per line: path → source. Each violation below is named after the rule it breaks.
const FIXTURE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  'node_modules/level/package.json': JSON.stringify({ name: 'level', version: '1.0.0', main: 'index.js' }),
  'node_modules/level/index.js': 'module.exports = {}\n',
  'node_modules/@libp2p/tcp/package.json': JSON.stringify({ name: '@libp2p/tcp', version: '1.0.0', main: 'index.js' }),
  'node_modules/@libp2p/tcp/index.js': 'module.exports = {}\n',
  'src/store/db.ts': "import { Level } from 'level'\nimport { tcp } from '@libp2p/tcp'\nexport const db = [Level, tcp]\n",
  'src/host/host.ts': 'export const host = 1\n',
  'src/util/time.ts': 'export const SECOND = 1000\n',
  'src/control/client.ts': "import { host } from '../host/host.js'\nexport const c = host\n",
  'src/mcp/server.ts': "import { c } from '../control/client.js'\nimport { host } from '../host/host.js'\n" +
    "import { a } from '../acl/a.js'\nexport const s = [c, host, a]\n",
  // the ACP bridge is a face: the daemon's code is out of its reach (issue 20)
  'src/acp/bridge.ts': "import { host } from '../host/host.js'\nexport const b = host\n",
  'src/cli/commands/up.ts': "import { host } from '../../host/host.js'\nexport const up = host\n",
  'src/cli/commands/send.ts': "import type { Packet } from '../../packet/types.js'\nimport { d } from '../../discovery/d.js'\n" +
    'export const send = (p: Packet): unknown => [p, d]\n',
  'src/acl/a.ts': "import { readFileSync } from 'node:fs'\nimport { inbox } from '../store/inbox.js'\n" +
    'export const a = [readFileSync, inbox]\n',
  'src/packet/types.ts': 'export interface Packet { id: string }\n',
  'src/packet/codec.ts': "import { Level } from 'level'\nexport const codec = Level\n",
  'src/store/inbox.ts': "import type { Packet } from '../packet/types.js'\nimport { codec } from '../packet/codec.js'\n" +
    "import { allow } from '../authz/allow.js'\nexport const inbox = (p: Packet): unknown => [p, codec, allow]\n",
  'src/authz/allow.ts': "import { host } from '../host/host.js'\nexport const allow = host\n",
  'src/discovery/d.ts': "import { host } from '../host/host.js'\nexport const d = host\n",
  'src/agents/manager.ts': "import type { Placement } from './placement.js'\nexport class Manager { p?: Placement }\n",
  'src/agents/placement.ts': "import { Manager } from './manager.js'\nexport class Placement { m = new Manager() }\n",
  'src/util/broken.ts': "import { gone } from './missing.js'\nexport const b = gone\n"
}

const EXPECTED: Record<string, string[]> = {
  'face-imports-daemon-internals': [
    'src/acp/bridge.ts → src/host/host.ts',
    'src/cli/commands/send.ts → src/discovery/d.ts',
    'src/mcp/server.ts → src/host/host.ts'
  ],
  'face-imports-beyond-contract': [
    'src/acp/bridge.ts → src/host/host.ts',
    'src/mcp/server.ts → src/acl/a.ts',
    'src/mcp/server.ts → src/host/host.ts'
  ],
  'pure-imports-stateful-code': ['src/acl/a.ts → src/store/inbox.ts'],
  'pure-imports-io-package': ['src/acl/a.ts → fs', 'src/packet/codec.ts → node_modules/level/index.js'],
  'store-imports-protocol-code': ['src/store/inbox.ts → src/authz/allow.ts'],
  'store-imports-packet-code': ['src/store/inbox.ts → src/packet/codec.ts'],
  'store-imports-network-package': ['src/store/db.ts → node_modules/@libp2p/tcp/index.js'],
  'service-imports-host': ['src/authz/allow.ts → src/host/host.ts', 'src/discovery/d.ts → src/host/host.ts'],
  'control-imports-host': ['src/control/client.ts → src/host/host.ts'],
  // one report per cycle, from the module dependency-cruiser reaches first; one edge is type-only
  'no-cycle': ['src/agents/manager.ts → src/agents/placement.ts → src/agents/manager.ts'],
  'unresolvable-import': ['src/util/broken.ts → ./missing.js']
}

describe('infra - import rules catch deliberate violations (fixture tree)', function () {
  this.timeout(120_000)
  let dir = ''
  let result: ICruiseResult

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'amesh-import-rules-'))
    for (const [path, text] of Object.entries(FIXTURE)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), text)
    }
    result = await cruiseTree(dir)
  })

  after(() => { if (dir !== '') rmSync(dir, { recursive: true, force: true }) })

  it('every rule has a fixture expectation', () => {
    assert.deepEqual(RULES.map((r) => r.name).sort(), Object.keys(EXPECTED).sort())
  })

  for (const [rule, expected] of Object.entries(EXPECTED)) {
    it(`${rule} reports exactly the planted violations`, () => {
      assert.deepEqual(violationsOf(result, rule).sort(), [...expected].sort())
    })
  }
})
