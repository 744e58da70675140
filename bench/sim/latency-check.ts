// `node --import ./dist/src/polyfill.js dist/bench/sim/latency-check.js MS`: two simulated
// hosts on a link of MS ms per message; libp2p ping round trips (one new
// stream each: the stream's protocol negotiation, then the 32-byte echo) and
// a burst of pings at once (per-message latency: the burst costs one round
// trip, not one per buffer).
import type { Libp2p } from '@libp2p/interface'
import type { PingService } from '@libp2p/ping'
import { multiaddr } from '@multiformats/multiaddr'
import { SimNet } from './net.js'

async function main (): Promise<void> {
  const ms = Number(process.argv[2] ?? 10)
  const net = new SimNet({ latency: ms })
  await net.grow(2)
  const a = net.hosts[1].running.libp2p as Libp2p<{ ping: PingService }>
  const b = multiaddr(net.hosts[0].addr)
  await a.services.ping.ping(b)
  const rtts: number[] = []
  for (let k = 0; k < 10; k++) rtts.push(await a.services.ping.ping(b))
  const t0 = Date.now()
  await Promise.all(Array.from({ length: 50 }, async () => await a.services.ping.ping(b)))
  process.stdout.write(`latency ${ms} ms per message: ping rtt ${rtts.join(' ')} ms; 50 pings at once in ${Date.now() - t0} ms\n`)
  await net.stop()
  process.exit(0)
}

main().catch((err) => { process.stderr.write(`${String(err?.stack ?? err)}\n`); process.exit(1) })
