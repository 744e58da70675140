import { strict as assert } from 'node:assert'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { V8_WORKER_NICE, v8WorkerTids, v8Workers } from '../../src/host/v8-threads.js'

const MODULE = fileURLToPath(new URL('../../src/host/v8-threads.js', import.meta.url))

/** The nice value of each thread of a process, from /proc (field 19 of stat). */
const NICE_OF = `
const { readdirSync, readFileSync } = require('node:fs')
const out = {}
for (const t of readdirSync('/proc/self/task')) {
  const s = readFileSync('/proc/self/task/' + t + '/stat', 'utf8')
  out[t] = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[16])
}
return out`

/** Run lowerV8Workers in a fresh node process with `flags`: the tids it picked and every thread's nice value after. */
function inChild (flags: string[]): { picked: number[], nice: Record<string, number>, pid: number } {
  const script = `import(${JSON.stringify(MODULE)}).then((m) => { const picked = m.lowerV8Workers(process.execArgv); const nice = (() => { ${NICE_OF} })(); console.log(JSON.stringify({ picked, nice, pid: process.pid })) })`
  return JSON.parse(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' })) as { picked: number[], nice: Record<string, number>, pid: number }
}

describe('host: V8 worker threads at the lowest priority', () => {
  it('reads the V8 pool size from the node flags (default 4; 0 = node decides: unknown)', () => {
    assert.equal(v8Workers([]), 4)
    assert.equal(v8Workers(['--v8-pool-size=2']), 2)
    assert.equal(v8Workers(['--v8_pool_size=1', '--max-semi-space-size=8']), 1)
    assert.equal(v8Workers(['--v8-pool-size=0']), undefined)
  })

  it('picks the workers after the main thread and V8\'s delayed-task thread, in creation order', () => {
    assert.deepEqual(v8WorkerTids([110, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109], 100, 4), [102, 103, 104, 105])
    // ids of other processes' threads come between: the order still holds
    assert.deepEqual(v8WorkerTids([100, 120, 131, 140, 150, 155, 160], 100, 4), [131, 140, 150, 155])
    // not the expected layout: nothing
    assert.deepEqual(v8WorkerTids([100, 101, 102], 100, 4), [])
    assert.deepEqual(v8WorkerTids([99, 100, 101, 102, 103, 104, 105], 100, 4), [])
  })

  it('lowers only the picked threads of a real node process, and as many as it has workers', function () {
    if (process.platform !== 'linux') this.skip()
    for (const [flags, n] of [[[], 4], [['--v8-pool-size=2'], 2]] as Array<[string[], number]>) {
      const r = inChild(flags)
      assert.equal(r.picked.length, n, `picked ${JSON.stringify(r.picked)} with ${flags.join(' ')}`)
      assert.ok(!r.picked.includes(r.pid), 'not the main thread')
      for (const [tid, nice] of Object.entries(r.nice)) {
        if (r.picked.includes(Number(tid))) assert.equal(nice, V8_WORKER_NICE, `thread ${tid}`)
        else assert.notEqual(nice, V8_WORKER_NICE, `thread ${tid} (not a V8 worker) keeps its priority`)
      }
    }
  })
})
