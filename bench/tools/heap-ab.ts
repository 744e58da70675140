// Throughput and peak RSS of a T2 burst under different daemon heap flags,
// alternated so drift hits every variant alike:
//   node --import ./dist/src/polyfill.js dist/bench/tools/heap-ab.js ROUNDS FLAG...
// e.g. heap-ab.js 3 --heap-growing-percent=0 --heap-growing-percent=20
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { perSecond } from '../lib/stats.js'
import type { BenchContext } from '../lib/types.js'
import { burst } from '../amesh/t2-throughput.js'
import { startPair } from '../amesh/pair.js'

async function once (ctx: BenchContext, flag: string): Promise<string> {
  process.env.AMESH_BENCH_NODE_ARGS = flag
  const pair = await startPair(ctx, 'ab')
  try {
    await burst(pair.a, pair.b, 2000, 512)
    const r = await burst(pair.a, pair.b, 30_000, 512)
    const mib = (b: number): string => (b / 2 ** 20).toFixed(0)
    const us = (n: number | undefined): string => n === undefined ? '-' : n.toFixed(0)
    return `${perSecond(30_000, r.elapsedMs).toFixed(0).padStart(6)} msg/s  peak rss ${mib(r.peakRss.a)} / ${mib(r.peakRss.b)} MiB  ` +
      `cpu us/packet sender ${us(r.cpu.subjects.sender)} (main ${us(r.cpu.main.sender)}) receiver ${us(r.cpu.subjects.receiver)} (main ${us(r.cpu.main.receiver)})`
  } finally {
    await pair.stop()
  }
}

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3)
  const flags = process.argv.slice(3)
  const root = await mkdtemp(join(tmpdir(), 'amesh-heap-ab-'))
  const ctx = toolContext(root)
  try {
    for (let i = 0; i < rounds; i++) {
      for (const flag of flags) process.stdout.write(`${flag.padEnd(28)} ${await once(ctx, flag)}\n`)
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

await main()
