import { strict as assert } from 'node:assert'
import { readFileSync } from 'node:fs'
import { MALLOC_TRIM_BYTES, SEMI_SPACE_MIB, daemonEnv, daemonNodeFlags } from '../../src/host/heap.js'
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

  it('runs the daemon that `up --detach` spawned with a fixed malloc trim threshold', async function () {
    if (process.env.MALLOC_TRIM_THRESHOLD_ !== undefined || process.env.MALLOC_MMAP_THRESHOLD_ !== undefined) {
      process.stderr.write('      (skipped: this run\'s environment sets MALLOC_TRIM_THRESHOLD_ or MALLOC_MMAP_THRESHOLD_, which the daemon keeps instead of its own)\n')
      this.skip()
    }
    const st = JSON.parse(await h.ok(['status', '--json'])) as Status
    const environ = readFileSync(`/proc/${st.pid}/environ`, 'utf8').split('\0')
    assert.ok(environ.includes(`MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_BYTES}`), 'the daemon\'s environment sets the trim threshold')
  })

  it('leaves malloc to an operator whose environment tunes it', () => {
    assert.deepEqual(daemonEnv({ MALLOC_TRIM_THRESHOLD_: '1048576' }), {})
    assert.deepEqual(daemonEnv({ MALLOC_MMAP_THRESHOLD_: '65536' }), {})
    assert.deepEqual(daemonEnv({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=0' }), {})
    assert.deepEqual(daemonEnv({ GLIBC_TUNABLES: 'glibc.rtld.optional_static_tls=1' }), { MALLOC_TRIM_THRESHOLD_: String(MALLOC_TRIM_BYTES) })
    assert.deepEqual(daemonEnv({}), { MALLOC_TRIM_THRESHOLD_: String(MALLOC_TRIM_BYTES) })
  })

  it('leaves the young generation to an operator who chose its size', () => {
    assert.deepEqual(daemonNodeFlags(['--max-semi-space-size=4']), [])
    assert.deepEqual(daemonNodeFlags(['--max_semi_space_size=32']), [])
    assert.deepEqual(daemonNodeFlags([]), [`--max-semi-space-size=${SEMI_SPACE_MIB}`])
  })
})
