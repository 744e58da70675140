// Where the CPU of T3 (64 KiB packets, a burst) goes, per thread of each
// daemon (user+system time from /proc/<pid>/task/<tid>/stat, µs per
// packet), against one or more checkouts, alternated:
//   node --import ./dist/src/polyfill.js dist/bench/tools/t3-threads.js ROUNDS COUNT [ROOT...]
// ROOT is a checkout with a built dist/ and bin/amesh (default: this one).
// T3_SIZE (bytes, default 65536) changes the payload size; T3_WARM (packets,
// default COUNT / 10) the warm-up burst before the measured one; T3_KEEP=1 keeps the
// daemons' homes (their amesh.log, e.g. with AMESH_BENCH_NODE_ARGS=--trace-gc).
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { perSecond } from '../lib/stats.js'
import { burst } from '../amesh/t2-throughput.js'
import { startPair } from '../amesh/pair.js'
import { threadLine, threads } from '../lib/threads.js'

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3)
  const n = Number(process.argv[3] ?? 1000)
  const size = Number(process.env.T3_SIZE ?? 65536)
  const warm = Number(process.env.T3_WARM ?? Math.max(1, Math.floor(n / 10)))
  const roots = process.argv.length > 4 ? process.argv.slice(4) : [undefined]
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t3-threads-'))
  try {
    for (let i = 0; i < rounds; i++) {
      for (const root of roots) {
        const ctx = toolContext(tmp)
        const pair = await startPair(root === undefined ? ctx : { ...ctx, root }, 't3t')
        try {
          await burst(pair.a, pair.b, warm, size)
          const a0 = await threads(pair.a.pid, true)
          const b0 = await threads(pair.b.pid, true)
          const r = await burst(pair.a, pair.b, n, size)
          const sa = threadLine(a0, await threads(pair.a.pid, true), n)
          const sb = threadLine(b0, await threads(pair.b.pid, true), n)
          const mib = perSecond(n, r.elapsedMs) * size / 2 ** 20
          process.stdout.write(`${(root ?? '.').padEnd(22)} ${mib.toFixed(1)} MiB/s client ${r.cpu.client.toFixed(0)} | sender ${sa} | receiver ${sb} | load ${(await readFile('/proc/loadavg', 'utf8')).split(' ')[0]}\n`)
        } finally {
          await pair.stop()
        }
      }
    }
  } finally {
    if (process.env.T3_KEEP === '1') process.stdout.write(`kept ${tmp}\n`)
    else await rm(tmp, { recursive: true, force: true })
  }
}

await main()
