// Where the CPU of T1 (one packet in flight) goes, per thread of each daemon
// (user and system time from /proc/<pid>/task/<tid>/stat, ms per packet).
//   node --import ./dist/src/polyfill.js dist/bench/tools/t1-threads.js [SAMPLES [ROOT]]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { p50 } from '../lib/stats.js'
import { latencySplit } from '../amesh/t1-latency.js'
import { startPair } from '../amesh/pair.js'
import { threadReport, threads } from '../lib/threads.js'

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 300)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t1-threads-'))
  const root = process.argv[3]
  const ctx = toolContext(tmp)
  const pair = await startPair(root === undefined ? ctx : { ...ctx, root }, 't1t')
  try {
    const a0 = await threads(pair.a.pid)
    const b0 = await threads(pair.b.pid)
    const r = await latencySplit(pair.a, pair.b, n, 0)
    process.stdout.write(threadReport('sender  ', a0, await threads(pair.a.pid), n))
    process.stdout.write(threadReport('receiver', b0, await threads(pair.b.pid), n))
    process.stdout.write(`T1 p50 ${p50(r.total).toFixed(2)} ms\n`)
  } finally {
    await pair.stop()
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
