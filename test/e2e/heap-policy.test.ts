import { strict as assert } from 'node:assert'
import { readFileSync } from 'node:fs'
import { SEMI_SPACE_MIB, daemonNodeFlags } from '../../src/host/heap.js'
import { startHost, type TestHost } from '../utils/hosts.js'

interface Status { pid: number, heap_policy: string, memory: { rss: number, heap_used: number, heap_total: number, external: number, array_buffers: number } }

describe('e2e daemon heap policy and memory report', function () {
  this.timeout(60_000)
  let h: TestHost

  before(async () => { h = await startHost() })
  after(async () => { await h?.cleanup() })

  it('runs the daemon with bounded old-generation growth and reports its memory', async () => {
    const st = JSON.parse(await h.ok(['status', '--json'])) as Status
    assert.equal(st.heap_policy, '--heap-growing-percent=100')
    const m = st.memory
    assert.ok(m.heap_used > 0 && m.heap_used <= m.heap_total, `heap ${m.heap_used} of ${m.heap_total}`)
    assert.ok(m.rss > m.heap_used, `rss ${m.rss} above the heap in use ${m.heap_used}`)
    assert.ok(m.array_buffers >= 0 && m.external >= m.array_buffers)
  })

  it('runs the daemon that `up --detach` spawned with the young generation bounded', async () => {
    const st = JSON.parse(await h.ok(['status', '--json'])) as Status
    const argv = readFileSync(`/proc/${st.pid}/cmdline`, 'utf8').split('\0')
    assert.ok(argv.includes(`--max-semi-space-size=${SEMI_SPACE_MIB}`), `daemon command line: ${argv.join(' ')}`)
    assert.ok(argv.indexOf(`--max-semi-space-size=${SEMI_SPACE_MIB}`) < argv.indexOf('up'), 'a node flag, before the script')
  })

  it('leaves the young generation to an operator who chose its size', () => {
    assert.deepEqual(daemonNodeFlags(['--max-semi-space-size=4']), [])
    assert.deepEqual(daemonNodeFlags(['--max_semi_space_size=32']), [])
    assert.deepEqual(daemonNodeFlags([]), [`--max-semi-space-size=${SEMI_SPACE_MIB}`])
  })
})
