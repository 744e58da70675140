// The control socket's start over a stale socket file (left by a daemon killed with
// kill -9) leaves module resolution alone: a module imported next through a symlinked
// directory still resolves to its real path. Node 20's realpath, used by the ESM
// resolver, stops resolving symlinks after a sync stat of a socket; a restarted daemon
// whose node_modules was linked in then loaded express twice and its A2A face died on
// "express.json is not a function" (a2a/durability, in parallel runs).
// Each probe runs in a new Node process: the resolver's caches are per process.
import { strict as assert } from 'node:assert'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT, waitFor } from '../utils/hosts.js'

const SERVER = pathToFileURL(join(ROOT, 'dist', 'src', 'control', 'server.js')).href

/** A socket file nobody listens on: its server was killed with SIGKILL. */
async function staleSocket (path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.stdout.write('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
  child.kill('SIGKILL')
  await new Promise<void>((resolve) => child.once('exit', () => resolve()))
  assert.ok(existsSync(path), 'the killed server left its socket file')
}

/** `node app/NAME` in the fixture; its stdout. */
async function probe (app: string, name: string, body: string): Promise<string> {
  writeFileSync(join(app, name), body)
  return await new Promise((resolve, reject) => {
    execFile(process.execPath, [join(app, name)], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${name}: ${err.message} ${stderr}`))
      else resolve(stdout.trim())
    })
  })
}

describe('control - socket start over a stale socket file', function () {
  this.timeout(60_000)
  let dir: string
  let app: string
  let sock: string

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'am-stale-'))
    const pkg = join(dir, 'real', 'pkg')
    mkdirSync(pkg, { recursive: true })
    writeFileSync(join(pkg, 'package.json'), '{"name":"pkg","main":"index.js"}\n')
    writeFileSync(join(pkg, 'index.js'), 'module.exports = require("./lib.js")\n')
    writeFileSync(join(pkg, 'lib.js'), 'exports.json = () => "parsed"\n')
    app = join(dir, 'app')
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), '{"type":"module"}\n')
    symlinkSync(join(dir, 'real'), join(app, 'node_modules'))
    sock = join(dir, 'amesh.sock')
    await staleSocket(sock)
  })

  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('a module imported after start() through a symlinked node_modules resolves to its real path', async () => {
    const real = pathToFileURL(join(dir, 'real', 'pkg', 'lib.js')).href
    const out = await probe(app, 'start.js', [
      `import { ControlServer } from ${JSON.stringify(SERVER)}`,
      "import.meta.resolve('pkg')",
      `const server = new ControlServer(${JSON.stringify(sock)}, {}, () => {})`,
      'await server.start()',
      "process.stdout.write(import.meta.resolve('pkg/lib.js'))",
      'await server.stop()'
    ].join('\n'))
    assert.equal(out, real)
    await waitFor(async () => !existsSync(sock), 5_000, 'stop() to remove the socket file')
  })
})
