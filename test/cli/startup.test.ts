// What the CLI loads before it runs a command: every `amesh` call is a new Node
// process (the test suite alone makes hundreds), so the everyday commands must not
// load the daemon's stack (libp2p, LevelDB, the faces), the control contract's
// schemas (zod), the YAML writer or the packet decoder. A module hook run in the
// CLI's process records each module it loads; the test names the packages that
// must not be among them.
import { strict as assert } from 'node:assert'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BIN } from '../utils/hosts.js'

/** packages none of the commands below may load */
const HEAVY = ['libp2p', '@libp2p/', '@chainsafe/', 'level', 'classic-level', 'zod', 'yaml', '@ipld/dag-cbor', 'cborg', '@modelcontextprotocol/', '@a2a-js/', 'express']

/** commands run on a home that is set up but has no daemon: they get as far as connecting */
const READ_ONLY = [['status'], ['id'], ['peers'], ['nodes'], ['node', 'ls'], ['card', 'x'], ['inbox', 'x'], ['outbox'], ['grants'], ['receipt', 'x']]
/** commands that would start a daemon on a set-up home: run on a missing one, they load all they import */
const CHANGING = [['send', '--as', 'a', 'b', 'hi'], ['node', 'add', 'x'], ['ack', 'x', '1'], ['grant', '--as', 'a', '--to', 'b'], ['down']]

const HOOKS = `import { appendFileSync } from 'node:fs'
export async function load (url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.AMESH_TEST_LOADED, url + '\\n')
  return await next(url, context)
}
`

async function run (args: string[], env: NodeJS.ProcessEnv, register: string): Promise<void> {
  await new Promise<void>((resolve) => {
    execFile(process.execPath, ['--import', register, BIN, ...args], { env, timeout: 30_000 }, () => resolve())
  })
}

/** The packages among `urls` that are in HEAVY (node_modules/NAME/…). */
function heavyIn (urls: string[]): string[] {
  const found = new Set<string>()
  for (const url of urls) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
    if (m === null) continue
    if (HEAVY.some((h) => h.endsWith('/') ? m[1].startsWith(h) : m[1] === h)) found.add(m[1])
  }
  return [...found].sort()
}

describe('cli - start-up loads only what the command needs', function () {
  this.timeout(120_000)
  let dir = ''
  let register = ''

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'am-startup-'))
    writeFileSync(join(dir, 'hooks.mjs'), HOOKS)
    register = join(dir, 'register.mjs')
    writeFileSync(register, `import { register } from 'node:module'\nregister(${JSON.stringify('file://' + join(dir, 'hooks.mjs'))})\n`)
  })

  after(() => rmSync(dir, { recursive: true, force: true }))

  async function loadedBy (args: string[], home: string): Promise<string[]> {
    const log = join(dir, `loaded-${args.join('-').replace(/[^a-z0-9-]/gi, '_')}.txt`)
    writeFileSync(log, '')
    await run([...args, '--home', home], { ...process.env, AMESH_TEST_LOADED: log }, register)
    return readFileSync(log, 'utf8').split('\n').filter((l) => l !== '')
  }

  it('startup - the hook sees what a command loads (up loads the host config reader, which needs yaml)', async () => {
    const home = mkdtempSync(join(dir, 'up-'))
    writeFileSync(join(home, 'config.yaml'), 'listen: [nonsense]\n')
    const urls = await loadedBy(['up'], home)
    assert.ok(urls.some((u) => u.endsWith('/dist/src/cli/main.js')), 'the CLI itself is seen')
    assert.ok(heavyIn(urls).includes('yaml'), `up reads config.yaml: ${heavyIn(urls).join(', ')}`)
  })

  it('startup - read-only commands load none of the daemon stack, zod, yaml or dag-cbor', async () => {
    const home = mkdtempSync(join(dir, 'ro-'))
    writeFileSync(join(home, 'config.yaml'), 'listen: ["/ip4/127.0.0.1/tcp/0"]\n')
    for (const args of READ_ONLY) {
      const urls = await loadedBy(args, home)
      assert.ok(urls.some((u) => u.endsWith('/dist/src/cli/main.js')), `${args.join(' ')} ran`)
      assert.deepEqual(heavyIn(urls), [], `amesh ${args.join(' ')}`)
    }
  })

  it('startup - state-changing commands load none of them either', async () => {
    const missing = join(dir, 'missing')
    for (const args of CHANGING) {
      const urls = await loadedBy(args, missing)
      assert.ok(urls.some((u) => u.includes('/dist/src/cli/commands/')), `${args.join(' ')} loaded its command`)
      assert.deepEqual(heavyIn(urls), [], `amesh ${args.join(' ')}`)
    }
  })
})
