// T1 along a fresh pair's life: p50/p99 of consecutive windows of sends, one
// at a time (as T1), from the first send on. Shows how many sends the
// daemons take to tier the path up (docs/PERFORMANCE.md, session 17).
//   node --import ./dist/src/polyfill.js dist/bench/tools/t1-curve.js [ROUNDS [WINDOWS]]
// WINDOWS: comma-separated sizes (default 200,1000,1000,1000,2000).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { p50, p99 } from '../lib/stats.js'
import { latencySplit } from '../amesh/t1-latency.js'
import { startPair } from '../amesh/pair.js'

async function round (windows: number[]): Promise<string> {
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t1-curve-'))
  const pair = await startPair(toolContext(tmp), 't1c')
  try {
    const parts: string[] = []
    let sent = 0
    for (const n of windows) {
      const s = (await latencySplit(pair.a, pair.b, n, 0)).total
      parts.push(`${sent + 1}-${sent + n} ${p50(s).toFixed(3)}/${p99(s).toFixed(2)}`)
      sent += n + 1 // latencySplit sends one unsampled packet first
    }
    return parts.join(' | ')
  } finally {
    await pair.stop()
    await rm(tmp, { recursive: true, force: true })
  }
}

const rounds = Number(process.argv[2] ?? 3)
const windows = (process.argv[3] ?? '200,1000,1000,1000,2000').split(',').map(Number)
process.stdout.write('sends p50/p99 ms, per window\n')
for (let r = 0; r < rounds; r++) process.stdout.write(`round ${r + 1}: ${await round(windows)}\n`)
