// Steady-state T2/T3-like bursts against checkouts, each with its own
// environment for the daemons, alternated round by round: for what a part of
// the path costs when a scratch build leaves it out (docs/PERFORMANCE.md,
// session 20: the receiver's store writes dropped, durability none).
//   BURST_VARIANTS='[["base", "/work/main", {}], ["none", "/work/main", {}, "none"], ["x", "/tmp/x", {"ZZ": "1"}]]' \
//     node --import ./dist/src/polyfill.js dist/bench/tools/burst-ab.js [ROUNDS]
// A variant is [label, checkout with a built dist/ and bin/amesh, environment
// added for its daemons, durability (default batch)]. BURST_SIZE (bytes,
// default 512), BURST_WARM (default 20,000; 3,000 is T3's) and BURST_COUNT
// (default 60,000) set the bursts: a warm-up, then the counted one on the
// same pair. Prints the rate and CPU µs per packet of the client, the sender
// (its main thread) and the receiver, as the bench's T2 figures.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { perSecond } from '../lib/stats.js'
import type { Durability } from '../../src/store/db.js'
import { burst } from '../amesh/t2-throughput.js'
import { startPair } from '../amesh/pair.js'

type Variant = [label: string, root: string, env: Record<string, string>, durability?: Durability]

async function withEnv<T> (env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = new Map(Object.keys(env).map((k) => [k, process.env[k]]))
  Object.assign(process.env, env)
  try {
    return await fn()
  } finally {
    for (const [k, v] of before) { if (v === undefined) Reflect.deleteProperty(process.env, k); else process.env[k] = v }
  }
}

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 2)
  const variants = JSON.parse(process.env.BURST_VARIANTS ?? '[["this", "."]]') as Variant[]
  const size = Number(process.env.BURST_SIZE ?? 512)
  const warm = Number(process.env.BURST_WARM ?? 20_000)
  const n = Number(process.env.BURST_COUNT ?? 60_000)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-burst-ab-'))
  try {
    for (let i = 0; i < rounds; i++) {
      for (const [label, root, env = {}, durability = 'batch'] of variants) {
        // the daemons take their environment when they start
        const pair = await withEnv(env, async () => await startPair({ ...toolContext(tmp), root }, `ab${i}`, durability))
        try {
          await burst(pair.a, pair.b, warm, size)
          const r = await burst(pair.a, pair.b, n, size)
          const us = (x: number | undefined): number => x ?? NaN
          const c = r.cpu
          const [sender, receiver] = [us(c.subjects.sender), us(c.subjects.receiver)]
          const total = c.client + sender + receiver
          const mib = perSecond(n, r.elapsedMs) * size / 2 ** 20
          process.stdout.write(`${label.padEnd(12)} ${perSecond(n, r.elapsedMs).toFixed(0)}/s ${mib.toFixed(1)} MiB/s | client ${c.client.toFixed(1)} sender ${sender.toFixed(1)} (main ${us(c.main.sender).toFixed(1)}) receiver ${receiver.toFixed(1)} (main ${us(c.main.receiver).toFixed(1)}) total ${total.toFixed(1)} µs\n`)
        } finally {
          await pair.stop()
        }
      }
    }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
