// The way in, alone: CPU per packet of the control client and of the sending
// daemon for sends queued durably for a host that is down (nothing leaves, so
// neither the link nor the receiver is in the figure), builds from different
// checkouts alternated round by round:
//   node --import ./dist/src/polyfill.js dist/bench/tools/intake-ab.js ROUNDS COUNT ROOT...
// Per round and root: a fresh pair, the receiver stopped, COUNT x 512 B sends
// (512 in flight, after a warm-up of COUNT / 10), then through send.batch, then
// COUNT / 20 x 64 KiB (AB_64K=N: N of them). The control client is this checkout's (it asks each
// daemon which request framings it reads).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { startCpu } from '../lib/cpu.js'
import { sendMany, sendManyBatched, type Daemon } from '../lib/daemon.js'
import { perSecond, nowMs } from '../lib/stats.js'
import type { BenchContext } from '../lib/types.js'
import { RX, TX, startPair } from '../amesh/pair.js'

const f0 = (n: number | undefined): string => n === undefined ? '-' : n.toFixed(1)

type Send = (a: Daemon, count: number, size: number) => Promise<unknown>
const single: Send = async (a, count, size) => await sendMany(a.control, TX, RX, count, size, 512)
const batched: Send = async (a, count, size) => await sendManyBatched(a.control, TX, RX, count, size, 512, 256)

async function measure (a: Daemon, count: number, size: number, send: Send): Promise<string> {
  const cpu = await startCpu([{ label: 'sender', pid: a.pid }])
  const t0 = nowMs()
  await send(a, count, size)
  const ms = nowMs() - t0
  const c = await cpu(count)
  return `${perSecond(count, ms).toFixed(0).padStart(6)}/s c ${f0(c.client)} s ${f0(c.subjects.sender)} (main ${f0(c.main.sender)})`
}

async function once (ctx: BenchContext, count: number): Promise<string> {
  const pair = await startPair(ctx, 'in')
  try {
    await pair.b.stop()
    await single(pair.a, Math.max(1, Math.floor(count / 10)), 512)
    const t2 = await measure(pair.a, count, 512, single)
    const batch = await measure(pair.a, count, 512, batched)
    const t3 = await measure(pair.a, Number(process.env.AB_64K ?? Math.max(1, Math.floor(count / 20))), 64 * 1024, single)
    return `512 B ${t2} | batch ${batch} | 64 KiB ${t3} us`
  } finally {
    await pair.stop()
  }
}

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3)
  const count = Number(process.argv[3] ?? 20_000)
  const roots = process.argv.slice(4)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-intake-ab-'))
  try {
    for (let i = 0; i < rounds; i++) {
      for (const root of roots) process.stdout.write(`${root.padEnd(24)} ${await once({ ...toolContext(tmp), root }, count)}\n`)
    }
  } finally {
    if (process.env.AB_KEEP === undefined) await rm(tmp, { recursive: true, force: true }); else process.stdout.write(`homes kept in ${tmp}\n`)
  }
}

await main()
