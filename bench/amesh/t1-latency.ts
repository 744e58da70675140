// T1: send -> accepted-and-durable at the receiver, one packet in flight, 512 B.
// The clock starts before the `send` call on the sender's control socket and
// stops when the receiver's inbox.follow stream delivers the packet (it emits
// only entries already durable in the receiving inbox).
import { followInbox, sendMany, text, type Daemon, type Durability } from '../lib/daemon.js'
import { nowMs, p50, p99 } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import { RX, TX, startPair } from './pair.js'

/** Round-trip samples (ms) of `count` sends, one at a time, after `warmup` unsampled ones. */
export async function latencySamples (a: Daemon, b: Daemon, count: number, warmup: number, size = 512, as = TX, to = RX): Promise<number[]> {
  return (await latencySplit(a, b, count, warmup, size, as, to)).total
}

/**
 * The same, split: `accept` is send call -> reply (durable in the sender's
 * outbox), `total` is send call -> receiver event.
 */
export async function latencySplit (a: Daemon, b: Daemon, count: number, warmup: number, size = 512, as = TX, to = RX): Promise<{ total: number[], accept: number[] }> {
  await sendMany(a.control, as, to, 1, size, 1) // first packet: link set up, cards checked
  const arrived = new Map<string, number>()
  let waiter: { id: string, resolve: (at: number) => void } | undefined
  const after = await b.inboxLast(to)
  const follow = await followInbox(b, to, after, (e, at) => {
    if (waiter !== undefined && waiter.id === e.id) { waiter.resolve(at); waiter = undefined } else arrived.set(e.id, at)
  })
  const samples: number[] = []
  const accept: number[] = []
  try {
    for (let i = 0; i < warmup + count; i++) {
      const t0 = nowMs()
      const r = await a.control.call('send', { as, to, text: text(size, i) })
      const ta = nowMs()
      const at = arrived.get(r.id) ?? await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`packet ${r.id} not delivered within 10 s`)), 10_000)
        waiter = { id: r.id, resolve: (t) => { clearTimeout(timer); resolve(t) } }
      })
      arrived.delete(r.id)
      if (i >= warmup) { samples.push(at - t0); accept.push(ta - t0) }
    }
  } finally {
    follow.close()
  }
  return { total: samples, accept }
}

/**
 * A fresh pair's daemons run the one-at-a-time path in V8's baseline tiers for
 * their first ~3,000 sends while the compiler tiers it up (docs/PERFORMANCE.md,
 * session 17: p99 8-9 ms over sends 200-1,200, 2.1-2.8 ms after 3,200). The
 * judged figures are taken after WARMUP sends, the steady state of a running
 * daemon, as B_rtt is (2,000 round trips of its one-stream path first); the
 * start of a fresh pair is reported beside them (T1.fresh.*: FRESH sends after
 * FRESH_WARMUP, what the bench measured before session 17).
 */
const WARMUP = 3000
const FRESH_WARMUP = 200
const FRESH = 1000

interface Split { total: number[], accept: number[] }

/** Sends before the judged samples, and the fresh window (this run's counts: --quick takes fewer). */
interface Counts { warmup: number, freshWarmup: number, fresh: number }

/** T1 on a fresh pair: its start (`fresh`, unless `counts.fresh` is 0), then the same pair warm. */
async function one (ctx: BenchContext, durability: Durability, count: number, counts: Counts): Promise<{ warm: Split, fresh?: Split }> {
  const pair = await startPair(ctx, `t1-${durability}`, durability)
  try {
    if (counts.fresh === 0) return { warm: await latencySplit(pair.a, pair.b, count, counts.warmup) }
    const fresh = await latencySplit(pair.a, pair.b, counts.fresh, counts.freshWarmup)
    const warm = await latencySplit(pair.a, pair.b, count, Math.max(0, counts.warmup - counts.freshWarmup - counts.fresh))
    return { warm, fresh }
  } finally {
    await pair.stop()
  }
}

async function run (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(2000, 150)
  const counts: Counts = { warmup: ctx.count(WARMUP, 300), freshWarmup: ctx.count(FRESH_WARMUP, 20), fresh: ctx.count(FRESH, 100) }
  const { warm: split, fresh } = await one(ctx, 'batch', count, counts)
  const batch = split.total
  const acceptNote = 'send call -> reply (durable in the sender outbox), part of T1.p50'
  const warmNote = `after ${counts.warmup} sends on the pair (steady state)`
  const freshFigures = (f: Split | undefined): Figure[] => f === undefined
    ? []
    : [
        { name: 'T1.fresh.p50', value: p50(f.total), unit: 'ms', better: 'lower', baseline: 'B_rtt.p50+B_fsync.p50', note: `a fresh pair's sends ${counts.freshWarmup + 1}-${counts.freshWarmup + f.total.length} (V8 still tiering the path up), batch` },
        { name: 'T1.fresh.p99', value: p99(f.total), unit: 'ms', better: 'lower', baseline: 'T1.fresh.p50' }
      ]
  if (ctx.quick) {
    return [
      { name: 'T1.p50', value: p50(batch), unit: 'ms', better: 'lower', baseline: 'B_rtt.p50+B_fsync.p50', maxRatio: 2, note: `${count} sends one at a time, 512 B, batch, ${warmNote} (--quick: no always run)` },
      { name: 'T1.p99', value: p99(batch), unit: 'ms', better: 'lower', baseline: 'T1.p50', maxRatio: 3 },
      { name: 'T1.accept.p50', value: p50(split.accept), unit: 'ms', better: 'lower', baseline: 'T1.p50', note: acceptNote },
      ...freshFigures(fresh)
    ]
  }
  const always = (await one(ctx, 'always', count, { ...counts, fresh: 0 })).warm.total
  const note = (d: string): string => `${count} sends one at a time, 512 B text, durability ${d}, ${warmNote}; control socket send -> receiver inbox.follow event`
  const rawSum = 'B_rtt.p50+B_fsync.p50'
  return [
    { name: 'T1.p50', value: p50(batch), unit: 'ms', better: 'lower', baseline: rawSum, maxRatio: 2, note: note('batch') },
    { name: 'T1.p99', value: p99(batch), unit: 'ms', better: 'lower', baseline: 'T1.p50', maxRatio: 3, note: note('batch') },
    { name: 'T1.accept.p50', value: p50(split.accept), unit: 'ms', better: 'lower', baseline: 'T1.p50', note: acceptNote },
    ...freshFigures(fresh),
    { name: 'T1.always.p50', value: p50(always), unit: 'ms', better: 'lower', baseline: rawSum, maxRatio: 2, note: note('always') },
    { name: 'T1.always.p99', value: p99(always), unit: 'ms', better: 'lower', baseline: 'T1.always.p50', maxRatio: 3, note: note('always') }
  ]
}

export const t1: Measurement = {
  name: 'T1',
  description: 'latency: send -> durable at the receiver, 512 B, one in flight (batch and always)',
  baselines: ['B_rtt', 'B_fsync'],
  run
}
