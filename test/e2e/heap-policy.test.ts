import { strict as assert } from 'node:assert'
import { startHost, type TestHost } from '../utils/hosts.js'

interface Status { heap_policy: string, memory: { rss: number, heap_used: number, heap_total: number, external: number, array_buffers: number } }

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
})
