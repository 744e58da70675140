// T6: RSS (VmRSS from /proc/<pid>/status) of an amesh host
//  - idle: two hosts connected, cards exchanged, no traffic (the sender's RSS);
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

async function run (ctx: BenchContext): Promise<Figure[]> {
  const queued = ctx.count(100_000, 5000)
  const pair = await startPair(ctx, 't6')
  try {
    const idle = Math.max((await pair.a.rss()) ?? 0, (await pair.b.rss()) ?? 0)
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
      { name: 'T6.idle', value: idle / MiB, unit: 'MiB', better: 'lower', max: 90, baseline: 'B_rss.host', note: 'larger of two connected idle hosts' },
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
