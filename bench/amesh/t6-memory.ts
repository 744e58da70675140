// T6: RSS (VmRSS from /proc/<pid>/status) of an amesh host
//  - idle: two hosts connected, cards exchanged, then IDLE_SETTLE without
//    traffic (the larger of the two); T6.idle.start: the same right after the
//    start, before V8's memory reducer has run (it releases the start-up
//    garbage and the grown new space ~10-20 s into an idle period);
//  - loaded: the peak of either host while a T2-style burst runs;
//  - queued: the sender after queueing N packets for a host that is down
//    (they wait durably in its outbox).
import { burst } from './t2-throughput.js'
import { sendMany } from '../lib/daemon.js'
import { waitFor } from '../lib/cli.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import { RX, TX, startPair } from './pair.js'
import { WINDOW } from './t2-throughput.js'

const MiB = 2 ** 20
/** How long the pair stays without traffic before T6.idle is read, ms (V8's memory reducer acts after ~8 s of low allocation, then in idle time) */
export const IDLE_SETTLE = 30_000

const larger = async (pair: { a: { rss: () => Promise<number | undefined> }, b: { rss: () => Promise<number | undefined> } }): Promise<number> =>
  Math.max((await pair.a.rss()) ?? 0, (await pair.b.rss()) ?? 0)

async function run (ctx: BenchContext): Promise<Figure[]> {
  const queued = ctx.count(100_000, 5000)
  const pair = await startPair(ctx, 't6')
  try {
    const started = await larger(pair)
    const settle = ctx.quick ? 2000 : IDLE_SETTLE
    await new Promise((resolve) => setTimeout(resolve, settle))
    const idle = await larger(pair)
    const load = await burst(pair.a, pair.b, ctx.count(20_000, 1000), 512)
    const loaded = Math.max(load.peakRss.a, load.peakRss.b)
    // the last acks reach the sender a little after the receiver's inbox shows the packets
    await waitFor(async () => (await pair.a.status()).outbox.queued === 0 ? true : undefined, 30_000)
    await pair.b.stop()
    await waitFor(async () => (await pair.a.status()).peers.length === 0 ? true : undefined, 15_000)
    await sendMany(pair.a.control, TX, RX, queued, 512, WINDOW)
    const st = await pair.a.status()
    if (st.outbox.queued !== queued) throw new Error(`outbox holds ${st.outbox.queued}, expected ${queued}`)
    const held = (await pair.a.rss()) ?? 0
    return [
      { name: 'T6.idle', value: idle / MiB, unit: 'MiB', better: 'lower', max: 90, baseline: 'B_rss.host', note: `larger of two connected hosts, after ${settle / 1000} s without traffic` },
      { name: 'T6.idle.start', value: started / MiB, unit: 'MiB', better: 'lower', baseline: 'B_rss.host', note: 'the same, right after the start' },
      { name: 'T6.loaded', value: loaded / MiB, unit: 'MiB', better: 'lower', max: 160, baseline: 'B_rss.host', note: 'peak of sender and receiver during a 512 B burst' },
      { name: 'T6.queued', value: held / MiB, unit: 'MiB', better: 'lower', max: 160, baseline: 'B_rss.host', note: `sender holding ${queued} packets in its outbox, receiver down` }
    ]
  } finally {
    await pair.stop()
  }
}

export const t6: Measurement = {
  name: 'T6',
  description: 'memory: RSS of an idle host, a loaded host, a host holding 100,000 queued packets',
  baselines: ['B_rtt'],
  run
}
