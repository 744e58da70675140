// T9: T1 (latency) and T2 (throughput) over a relayed connection: sender and
// receiver each in a private LAN behind its own masquerading router (network
// namespaces, test/utils/netns-nat.ts), both knowing only a relay host on the
// "public" segment; every packet crosses the relay. The ratios are to the
// direct T1/T2 of the same run (loopback). Needs root and iptables or nft.
import { canUseNat, createNat, NAT_ADDRS, type Nat } from '../../test/utils/netns-nat.js'
import { Daemon, stopAll } from '../lib/daemon.js'
import { waitFor } from '../lib/cli.js'
import { p50, p99 } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import { latencySamples } from './t1-latency.js'
import { burst, WINDOW } from './t2-throughput.js'
import { RX, TX } from './pair.js'

const PORT = 4001

interface Relayed { a: Daemon, b: Daemon, relay: Daemon, nat: Nat }

async function reserved (d: Daemon): Promise<void> {
  await waitFor(async () => {
    const s = await d.status() as unknown as { relay?: { relays: unknown[] } }
    return (s.relay?.relays.length ?? 0) > 0 ? true : undefined
  }, 60_000, 250)
}

async function start (ctx: BenchContext): Promise<Relayed> {
  const nat = await createNat('b')
  const daemons: Daemon[] = []
  try {
    const relay = await Daemon.start(ctx, 't9-relay', { netns: nat.ns('relay'), listen: `/ip4/${NAT_ADDRS.relay}/tcp/${PORT}`, config: ['relay: {serve: true}'] })
    daemons.push(relay)
    const b = await Daemon.start(ctx, 't9-b', { netns: nat.ns('h2'), listen: `/ip4/${NAT_ADDRS.h2}/tcp/${PORT}`, peers: [relay.addr] })
    daemons.push(b)
    await b.ensureNode(RX)
    const a = await Daemon.start(ctx, 't9-a', { netns: nat.ns('h1'), listen: `/ip4/${NAT_ADDRS.h1}/tcp/${PORT}`, peers: [relay.addr] })
    daemons.push(a)
    await a.ensureNode(TX)
    await reserved(a)
    await reserved(b)
    await b.grant(RX, TX) // resolves tx through the DHT on the relay, hands the grant over the relayed connection
    return { a, b, relay, nat }
  } catch (err) {
    await stopAll(daemons)
    await nat.down()
    throw err
  }
}

async function run (ctx: BenchContext): Promise<Figure[]> {
  const can = canUseNat()
  if (!can.ok) throw new Error(`T9 needs network namespaces: ${can.reason ?? ''}`)
  const r = await start(ctx)
  try {
    const count = ctx.count(1000, 100)
    const lat = await latencySamples(r.a, r.b, count, ctx.count(100, 10))
    const peers = await r.a.control.call('peers')
    if (!peers.connected.some((c) => c.peer === r.b.peerId && c.relayed)) throw new Error('T9: the hosts are not connected through the relay')
    const n = ctx.count(20_000, 2000)
    await burst(r.a, r.b, ctx.count(1000, 100), 512)
    const t = await burst(r.a, r.b, n, 512)
    const note = 'hosts behind two NAT routers (netns MASQUERADE), through a relay host; default relay limits'
    return [
      { name: 'T9.T1.p50', value: p50(lat), unit: 'ms', better: 'lower', baseline: 'T1.p50', note: `${count} sends one at a time, 512 B, relayed; ${note}` },
      { name: 'T9.T1.p99', value: p99(lat), unit: 'ms', better: 'lower', baseline: 'T1.p99', note: 'relayed' },
      { name: 'T9.T2', value: n / (t.elapsedMs / 1000), unit: 'msg/s', better: 'higher', baseline: 'T2', note: `${n} x 512 B, ${WINDOW} in flight, relayed; ${note}` }
    ]
  } finally {
    await stopAll([r.a, r.b, r.relay])
    await r.nat.down()
  }
}

export const t9: Measurement = {
  name: 'T9',
  description: 'relayed: T1 and T2 between two NAT\'d hosts through a circuit relay (network namespaces), beside the direct T1/T2',
  baselines: ['T1', 'T2'],
  run
}
