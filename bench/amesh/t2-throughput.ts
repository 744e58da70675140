// T2: sustained durable 512 B packets/s from one node to another host's node.
// T3: the same with 64 KiB packets, MiB/s of payload.
// The sender's control socket keeps up to WINDOW sends in flight; the clock
// runs from the first send to the moment the receiver's inbox holds the last
// packet durably (its `inbox.state` last, polled every 10 ms: ~80 µs of the
// receiver's CPU a poll, nothing per packet, like the raw sink it is compared to).
import { sendMany, sendManyBatched, waitInbox, type Daemon } from '../lib/daemon.js'
import { cpuFigures, startCpu, type CpuPerItem } from '../lib/cpu.js'
import { mibPerSecond, nowMs, perSecond } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import { RX, TX, startPair } from './pair.js'

export const WINDOW = 512
/** sends per `send.batch` call in T2.batch (WINDOW / BATCH calls in flight) */
export const BATCH = 256

/** The warm-up burst before T2's counted one (T5 gives each of its senders as many). */
export function t2Warm (ctx: BenchContext): number { return ctx.count(2000, 200) }

/** How a burst's packets are handed to the sender's control socket. */
export type SendFn = (a: Daemon, as: string, to: string, count: number, size: number) => Promise<string[]>
const single: SendFn = async (a, as, to, count, size) => await sendMany(a.control, as, to, count, size, WINDOW)
export const batched: SendFn = async (a, as, to, count, size) => await sendManyBatched(a.control, as, to, count, size, WINDOW, BATCH)

/** Wall time, peak RSS of both hosts, CPU per packet of client, sender (a) and receiver (b). */
export interface Burst { elapsedMs: number, peakRss: { a: number, b: number }, cpu: CpuPerItem }

/** Time `count` packets of `size` from a:as to b:to, durable at b; samples both RSS every 100 ms. */
export async function burst (a: Daemon, b: Daemon, count: number, size: number, as = TX, to = RX, send: SendFn = single): Promise<Burst> {
  const base = await b.inboxLast(to)
  const peakRss = { a: 0, b: 0 }
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      peakRss.a = Math.max(peakRss.a, (await a.rss()) ?? 0)
      peakRss.b = Math.max(peakRss.b, (await b.rss()) ?? 0)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  const cpu = await startCpu([{ label: 'sender', pid: a.pid }, { label: 'receiver', pid: b.pid }])
  const t0 = nowMs()
  try {
    const ids = await send(a, as, to, count, size)
    if (new Set(ids).size !== count) throw new Error('duplicate packet ids')
    const t1 = await waitInbox(b, to, base + count)
    const last = await b.inboxLast(to)
    if (last !== base + count) throw new Error(`receiver holds ${last - base} packets, sent ${count}`)
    return { elapsedMs: t1 - t0, peakRss, cpu: await cpu(count) }
  } finally {
    sampling = false
    await sampler
  }
}

async function t2run (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(30_000, 2000)
  const pair = await startPair(ctx, 't2')
  try {
    await burst(pair.a, pair.b, t2Warm(ctx), 512) // warm-up
    const r = await burst(pair.a, pair.b, count, 512)
    await burst(pair.a, pair.b, t2Warm(ctx), 512, TX, RX, batched) // warm-up of send.batch
    const rb = await burst(pair.a, pair.b, count, 512, TX, RX, batched)
    const note = `${count} x 512 B text, ${WINDOW} sends in flight, durability batch`
    const batchNote = `${count} x 512 B text, send.batch of ${BATCH}, ${WINDOW / BATCH} calls (${WINDOW} sends) in flight, durability batch`
    return [
      { name: 'T2', value: perSecond(count, r.elapsedMs), unit: 'msg/s', better: 'higher', baseline: 'B_stream.512B', minRatio: 1.5, note },
      { name: 'T2.rss.sender', value: r.peakRss.a / 2 ** 20, unit: 'MiB', better: 'lower', baseline: 'B_rss.host', note: 'peak during T2' },
      { name: 'T2.rss.receiver', value: r.peakRss.b / 2 ** 20, unit: 'MiB', better: 'lower', baseline: 'B_rss.host', note: 'peak during T2' },
      ...cpuFigures('T2', r.cpu, 'packet', 'T2'),
      { name: 'T2.batch', value: perSecond(count, rb.elapsedMs), unit: 'msg/s', better: 'higher', baseline: 'B_stream.512B', note: batchNote },
      ...cpuFigures('T2.batch', rb.cpu, 'packet', 'T2.batch')
    ]
  } finally {
    await pair.stop()
  }
}

const KiB64 = 64 * 1024

/**
 * T3 is judged at steady state, as its baseline (B_stream.64KB, the median of
 * five streams in one warm process) and T1 (session 17) are: a fresh pair
 * runs the path in V8's baseline tiers for its first thousands of sends, and
 * 200 warm-up packets left most of T3's 3,000 there (t3-threads with
 * T3_WARM=300 against 3,000: 68.9 / 73.2 against 91.4 / 88.9 MiB/s,
 * docs/PERFORMANCE.md session 18). The first burst after the short warm-up
 * is what T3 measured before, reported as T3.fresh; T3 is the burst after it.
 */
async function t3run (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(3000, 100)
  const warm = ctx.count(200, 20)
  const pair = await startPair(ctx, 't3')
  try {
    await burst(pair.a, pair.b, warm, KiB64) // warm-up
    const fresh = await burst(pair.a, pair.b, count, KiB64)
    const r = await burst(pair.a, pair.b, count, KiB64)
    const note = `${count} x 64 KiB text, ${WINDOW} sends in flight, durability batch, after ${warm + count} on the pair`
    const freshNote = `the pair's first ${count} x 64 KiB after ${warm} (V8 still tiering the path up)`
    return [
      { name: 'T3', value: mibPerSecond(count * KiB64, r.elapsedMs), unit: 'MiB/s', better: 'higher', baseline: 'B_stream.64KB', minRatio: 0.8, note },
      { name: 'T3.rate', value: perSecond(count, r.elapsedMs), unit: 'msg/s', better: 'higher', baseline: 'B_stream.64KB.rate', note },
      ...cpuFigures('T3', r.cpu, 'packet', 'T3'),
      { name: 'T3.fresh', value: mibPerSecond(count * KiB64, fresh.elapsedMs), unit: 'MiB/s', better: 'higher', baseline: 'B_stream.64KB', note: freshNote }
    ]
  } finally {
    await pair.stop()
  }
}

export const t2: Measurement = {
  name: 'T2',
  description: 'throughput: sustained durable 512 B packets/s, one node to another host',
  baselines: ['B_stream', 'B_rtt'],
  run: t2run
}

export const t3: Measurement = {
  name: 'T3',
  description: 'large: durable 64 KiB packets, MiB/s',
  baselines: ['B_stream'],
  run: t3run
}
