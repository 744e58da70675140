// What the daemon loads at start: the A2A SDK (and the JOSE library it
// loads) only once an A2A agent is in use (src/host/a2a-agents.ts). A child
// process imports the daemon's module with a loader hook that lists every
// module it loads; nothing else runs in it.
import { strict as assert } from 'node:assert'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
// dist/test/host/ → dist/src/host/
const DAEMON = join(dirname(fileURLToPath(import.meta.url)), '../../src/host/daemon.js')
const A2A_STACK = join(dirname(fileURLToPath(import.meta.url)), '../../src/host/a2a-stack.js')

const HOOKS = `export async function load (url, ctx, next) { process.stderr.write('LOADED ' + url + '\\n'); return await next(url, ctx) }\n`
const REGISTER = "import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n"

describe('host - modules loaded at start', function () {
  this.timeout(60_000)
  let dir: string

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'amesh-start-modules-'))
    writeFileSync(join(dir, 'hooks.mjs'), HOOKS)
    writeFileSync(join(dir, 'register.mjs'), REGISTER)
  })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  const loaded = async (module: string): Promise<string[]> => {
    const { stderr } = await run(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, '--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(module).href)})`])
    return stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length))
  }

  it('the daemon\'s modules do not load the A2A SDK; the A2A agents\' stack does', async () => {
    const daemon = await loaded(DAEMON)
    assert.ok(daemon.some((u) => u.endsWith('/src/host/components.js')), 'the hook saw the daemon load')
    assert.deepEqual(daemon.filter((u) => u.includes('/@a2a-js/sdk/') || u.includes('/jose/')), [])
    const stack = await loaded(A2A_STACK)
    assert.ok(stack.some((u) => u.includes('/@a2a-js/sdk/')), 'the stack loads the SDK')
  })
})
