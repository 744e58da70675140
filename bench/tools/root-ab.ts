// T2 bursts and T1 samples against daemons built from different checkouts,
// alternated so drift on a shared machine hits every build alike; CPU µs per
// packet of each process is the figure to compare:
//   node --import ./dist/src/polyfill.js dist/bench/tools/root-ab.js ROUNDS COUNT ROOT...
// ROOT is a checkout with a built dist/ and bin/amesh (e.g. a worktree of the
// base commit). The control client is this checkout's.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { startCpu } from '../lib/cpu.js'
import { p50, p99, perSecond } from '../lib/stats.js'
import type { BenchContext } from '../lib/types.js'
import type { Daemon } from '../lib/daemon.js'
import { batched, burst } from '../amesh/t2-throughput.js'
import { latencySplit } from '../amesh/t1-latency.js'
import { startPair } from '../amesh/pair.js'

/** T1 samples per round (AB_T1 in the environment; 0: no T1) */
const t1Samples = Number(process.env.AB_T1 ?? 400)
/** AB_BATCH=1: after the T2 burst, one of the same count through send.batch (as T2.batch) */
const withBatch = process.env.AB_BATCH === '1'
const T1_WARMUP = 50
/** AB_T3=N: after the T2 burst(s), N × 64 KiB (as T3, after a warm-up of N / 10) */
const t3Count = Number(process.env.AB_T3 ?? 0)
const KiB64 = 64 * 1024

const f0 = (n: number | undefined): string => n === undefined ? '-' : n.toFixed(0)

/** Each daemon's synced batches so far (`status`). */
async function syncedOf (a: Daemon, b: Daemon): Promise<[number, number]> {
  const [x, y] = await Promise.all([a, b].map(async (d) => ((await d.control.call('status')).commits as { synced: number }).synced))
  return [x, y]
}

async function once (ctx: BenchContext, count: number): Promise<string> {
  const pair = await startPair(ctx, 'ab')
  try {
    // T1 first, on the fresh pair (as the bench does): after a burst the stores compact for a while
    const cpu = await startCpu([{ label: 'sender', pid: pair.a.pid }, { label: 'receiver', pid: pair.b.pid }])
    const t1 = t1Samples === 0 ? { total: [0], accept: [0] } : await latencySplit(pair.a, pair.b, t1Samples, T1_WARMUP)
    const c1 = await cpu(t1Samples + T1_WARMUP)
    await burst(pair.a, pair.b, 2000, 512)
    const before = await syncedOf(pair.a, pair.b)
    const r = await burst(pair.a, pair.b, count, 512)
    const after = await syncedOf(pair.a, pair.b)
    const commits = `synced s/r ${(1000 * (after[0] - before[0]) / count).toFixed(1)}/${(1000 * (after[1] - before[1]) / count).toFixed(1)} per 1,000 `
    const s = r.cpu.subjects
    const rb = withBatch ? await burst(pair.a, pair.b, count, 512, undefined, undefined, batched) : undefined
    const batch = rb === undefined ? '' : `T2.batch ${perSecond(count, rb.elapsedMs).toFixed(0).padStart(6)} msg/s cpu c/s/r ${rb.cpu.client.toFixed(0)}/${f0(rb.cpu.subjects.sender)}/${f0(rb.cpu.subjects.receiver)} main s/r ${f0(rb.cpu.main.sender)}/${f0(rb.cpu.main.receiver)} us | `
    const r3 = t3Count > 0 ? (await burst(pair.a, pair.b, Math.max(1, Math.floor(t3Count / 10)), KiB64), await burst(pair.a, pair.b, t3Count, KiB64)) : undefined
    const t3 = r3 === undefined ? '' : `T3 ${perSecond(t3Count, r3.elapsedMs).toFixed(0).padStart(5)} msg/s cpu c/s/r ${r3.cpu.client.toFixed(0)}/${f0(r3.cpu.subjects.sender)}/${f0(r3.cpu.subjects.receiver)} main s/r ${f0(r3.cpu.main.sender)}/${f0(r3.cpu.main.receiver)} us | `
    return t3 + batch + `pids ${pair.a.pid}/${pair.b.pid} T2 ${perSecond(count, r.elapsedMs).toFixed(0).padStart(6)} msg/s cpu c/s/r ${r.cpu.client.toFixed(0)}/${f0(s.sender)}/${f0(s.receiver)} main s/r ${f0(r.cpu.main.sender)}/${f0(r.cpu.main.receiver)} us rss s/r ${f0(r.peakRss.a / 2 ** 20)}/${f0(r.peakRss.b / 2 ** 20)} MiB ${commits}| ` +
      `T1 p50 ${p50(t1.total).toFixed(2)} p99 ${p99(t1.total).toFixed(2)} accept ${p50(t1.accept).toFixed(2)} ms cpu c/s/r ${c1.client.toFixed(0)}/${f0(c1.subjects.sender)}/${f0(c1.subjects.receiver)} us`
  } finally {
    await pair.stop()
  }
}

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3)
  const count = Number(process.argv[3] ?? 10_000)
  const roots = process.argv.slice(4)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-root-ab-'))
  try {
    for (let i = 0; i < rounds; i++) {
      for (const root of roots) {
        const ctx = { ...toolContext(tmp), root }
        process.stdout.write(`${root.padEnd(24)} ${await once(ctx, count)}\n`)
      }
    }
  } finally {
    // AB_KEEP: leave the hosts' homes (their amesh.log, e.g. with --trace-gc) for a look
    if (process.env.AB_KEEP === undefined) await rm(tmp, { recursive: true, force: true })
    else process.stdout.write(`homes kept in ${tmp}\n`)
  }
}

await main()
