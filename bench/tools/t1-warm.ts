// T1 on a fresh pair (as the bench measures it) and again on the same pair
// once its daemons have run a T2-sized burst and gone quiet: whether T1's
// p99/p50 is the daemons' warm-up (V8 tiering up the hot paths, docs/
// PERFORMANCE.md session 12) or the steady state.
//   node --import ./dist/src/polyfill.js dist/bench/tools/t1-warm.js [ROUNDS] [SAMPLES] [BURST]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { p50, p99 } from '../lib/stats.js'
import { waitQuiet } from '../lib/quiet.js'
import { latencySplit } from '../amesh/t1-latency.js'
import { burst } from '../amesh/t2-throughput.js'
import { startPair } from '../amesh/pair.js'

/** unsampled sends before each T1 (the bench's) */
const T1_WARMUP = 200

function line (label: string, total: number[]): string {
  const a = p50(total)
  const b = p99(total)
  return `${label} p50 ${a.toFixed(3)} p99 ${b.toFixed(3)} ms p99/p50 ${(b / a).toFixed(2)}`
}

async function round (root: string, samples: number, burstCount: number): Promise<string> {
  const pair = await startPair(toolContext(root), 'warm')
  try {
    const cold = await latencySplit(pair.a, pair.b, samples, T1_WARMUP)
    await burst(pair.a, pair.b, burstCount, 512)
    const quiet = await waitQuiet([pair.a.pid, pair.b.pid], { maxCpu: 0.03, windowMs: 1000, timeoutMs: 30_000 })
    const warm = await latencySplit(pair.a, pair.b, samples, T1_WARMUP)
    return `${line('fresh', cold.total)} | after ${burstCount} burst (quiet after ${quiet.waitedMs.toFixed(0)} ms${quiet.quiet ? '' : ', not quiet'}) ${line('warm', warm.total)}`
  } finally {
    await pair.stop()
  }
}

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3)
  const samples = Number(process.argv[3] ?? 2000)
  const burstCount = Number(process.argv[4] ?? 30_000)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t1-warm-'))
  try {
    for (let i = 0; i < rounds; i++) process.stdout.write(`${await round(tmp, samples, burstCount)}\n`)
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
