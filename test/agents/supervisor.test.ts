import { strict as assert } from 'node:assert'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RotatingLog, logFiles } from '../../src/agents/logs.js'
import { parseSpecObject } from '../../src/agents/spec.js'
import { Supervisor } from '../../src/agents/supervisor.js'
import { waitFor } from '../utils/hosts.js'

function supervisor (dir: string, script: string, extra: Record<string, unknown>): Supervisor {
  const spec = parseSpecObject({ name: 's', command: process.execPath, args: ['-e', script], stop_timeout: '1s', ...extra }, dir)
  return new Supervisor({ spec, env: process.env, log: new RotatingLog(dir) })
}

describe('agents supervisor - restart policy, window, heartbeat, stop', function () {
  this.timeout(30_000)
  let dir: string
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'am-sup-')) })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('agents supervisor - on-failure restarts with backoff, then gives up past max_restarts in the window', async () => {
    const s = supervisor(dir, 'console.log("run"); process.exit(3)', { restart: { policy: 'on-failure', backoff: 50, backoff_max: 100, max_restarts: 2, window: '10s' } })
    s.start()
    await waitFor(async () => s.state === 'failed', 10_000, 'state failed')
    assert.equal(s.restarts, 2)
    assert.equal(s.lastExit, 'exit 3')
    const log = readFileSync(join(dir, 'output.log'), 'utf8')
    assert.equal(log.split('\n').filter((l) => l === 'run').length, 3)
    assert.match(log, /giving up: 2 restarts within 10000 ms/)
  })

  it('agents supervisor - on-failure leaves a clean exit alone; never does not restart a failure', async () => {
    const clean = supervisor(dir, 'process.exit(0)', { restart: { policy: 'on-failure', backoff: 10 } })
    clean.start()
    await waitFor(async () => clean.state === 'exited', 10_000, 'clean exit')
    const never = supervisor(dir, 'process.exit(1)', { restart: { policy: 'never', backoff: 10 } })
    never.start()
    await waitFor(async () => never.state === 'failed', 10_000, 'failed')
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(clean.restarts, 0)
    assert.equal(never.restarts, 0)
  })

  it('agents supervisor - a missed heartbeat stops the process as unhealthy and restarts it; beats keep it alive', async () => {
    const s = supervisor(dir, 'setInterval(() => {}, 1000)', { health: { heartbeat: 400 }, restart: { policy: 'on-failure', backoff: 50 } })
    s.start()
    const first = s.pid
    await waitFor(async () => s.restarts >= 1 && s.state === 'running', 10_000, 'restart after missed heartbeat')
    assert.notEqual(s.pid, first)
    assert.match(readFileSync(join(dir, 'output.log'), 'utf8'), /no heartbeat within 400 ms/)
    const before = s.restarts
    const timer = setInterval(() => s.beat(), 100)
    await new Promise((resolve) => setTimeout(resolve, 1200))
    clearInterval(timer)
    assert.equal(s.restarts, before)
    await s.stop()
  })

  it('agents supervisor - stop sends SIGTERM, then SIGKILL after stop_timeout, and does not restart', async () => {
    const s = supervisor(dir, 'process.on("SIGTERM", () => console.log("ignoring TERM")); setInterval(() => {}, 1000); console.log("READY" + 1)', { restart: { policy: 'always', backoff: 10 } })
    s.start()
    await waitFor(async () => readFileSync(join(dir, 'output.log'), 'utf8').includes("READY1"), 10_000, 'started')
    const t0 = Date.now()
    await s.stop()
    assert.ok(Date.now() - t0 >= 900, 'waited for the stop timeout')
    const log = readFileSync(join(dir, 'output.log'), 'utf8')
    assert.match(log, /ignoring TERM/)
    assert.match(log, /did not stop within 1000 ms: SIGKILL/)
    assert.equal(s.state, 'stopped')
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(s.restarts, 0)
  })

  it('agents logs - rotation keeps the newest files, oldest first', () => {
    const log = new RotatingLog(dir, { maxBytes: 10, keep: 2 })
    for (let i = 0; i < 5; i++) log.write(`line-${i}-xxxx\n`)
    const files = logFiles(dir, 2)
    assert.deepEqual(files.map((f) => f.slice(dir.length + 1)), ['output.log.2', 'output.log.1', 'output.log'])
    assert.deepEqual(files.map((f) => readFileSync(f, 'utf8').trim()), ['line-2-xxxx', 'line-3-xxxx', 'line-4-xxxx'])
  })
})
