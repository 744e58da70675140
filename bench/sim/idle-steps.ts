// `node --expose-gc --import ./dist/src/polyfill.js dist/bench/sim/idle-steps.js N SETTLE_S WINDOW_S [STEPS]`:
// what each timer of an idle simulated host costs, one at a time. Forms N
// hosts (bench/sim/net.ts), waits SETTLE_S seconds, then measures the
// process CPU over a window of WINDOW_S seconds with everything running, then
// turns one periodic job off on every host and measures the next window, and
// so on (each step keeps the earlier ones off): the difference between two
// windows is what that job cost (STEPS: only the first STEPS jobs). No profiler runs (its sampling would be
// counted too). The jobs are stopped through their own stop() where they have
// one; this is a measurement, not a way to run a host.
import type { Libp2p } from '@libp2p/interface'
import type { RunningHost } from '../../src/host/components.js'
import { SimNet, sleep } from './net.js'

interface Stoppable { stop: () => void | Promise<void> }
type Step = [string, (h: RunningHost) => void | Promise<void>]

function services (h: RunningHost): Record<string, unknown> { return (h.libp2p as Libp2p<Record<string, unknown>>).services }
function component (h: RunningHost, name: string): Stoppable | undefined {
  return (h.libp2p as unknown as { components: Record<string, Stoppable | undefined> }).components[name]
}
function field<T> (o: unknown, name: string): T { return (o as Record<string, T>)[name] }

/** Close every connection to a peer but the oldest (both ends see the same connection go). */
async function oneConnectionPerPeer (h: RunningHost): Promise<void> {
  const byPeer = new Map<string, ReturnType<Libp2p['getConnections']>>()
  for (const c of h.libp2p.getConnections()) byPeer.set(c.remotePeer.toString(), [...(byPeer.get(c.remotePeer.toString()) ?? []), c])
  const mine = h.libp2p.peerId.toString()
  for (const [peer, conns] of byPeer) {
    if (conns.length < 2 || peer < mine) continue // the smaller peer id leaves it to the other end
    const sorted = [...conns].sort((a, b) => a.timeline.open - b.timeline.open)
    for (const c of sorted.slice(1)) await c.close().catch(() => {})
  }
}

const STEPS: Step[] = [
  ['libp2p connection monitor (ping per connection)', (h) => { void component(h, 'connectionMonitor')?.stop() }],
  ['gossipsub heartbeat (1 s)', (h) => { field<{ cancel: () => void } | null>(services(h).pubsub, 'heartbeatTimer')?.cancel() }],
  ['kad-dht closest-peer tagging (5 s)', (h) => { void field<Stoppable>(field(services(h).dht, 'routingTable'), 'closestPeerTagger').stop() }],
  ['store guard free-space poll (1 s)', (h) => { h.guard.stop() }],
  ['outbox TTL sweep (1 s)', (h) => { field<Stoppable>(h.delivery, 'sweeper').stop() }],
  ['A2A queue TTL sweep (1 s)', (h) => { field<Stoppable>(h.a2a.transport, 'sweeper').stop() }],
  ['receipt link retry (5 s)', (h) => { clearInterval(field<NodeJS.Timeout>(h.receipts.link, 'timer')) }],
  ['relay client check (5 s)', (h) => { void (services(h).relayClient as Stoppable).stop() }],
  ['bootstrap keeper tick (1 s)', (h) => { h.keeper.stop() }],
  ['duplicate connections closed (yamux keep-alive per connection)', oneConnectionPerPeer]
]

async function window (n: number, ms: number): Promise<number> {
  global.gc?.()
  const c0 = process.cpuUsage()
  await sleep(ms)
  const c = process.cpuUsage(c0)
  return 100 * (c.user + c.system) / 1000 / ms / n
}

async function main (): Promise<void> {
  const [n, settle, win] = process.argv.slice(2, 5).map(Number)
  const steps = STEPS.slice(0, process.argv[5] === undefined ? STEPS.length : Number(process.argv[5]))
  const net = new SimNet({ latency: 0 })
  await net.grow(n)
  await net.waitJoined(300_000)
  await sleep(settle * 1000)
  const filler = (h: RunningHost): { asks: number } => field(field(h.discovery, 'engine'), 'filler')
  let asked = 0
  const conns = (): string => {
    const c = net.hosts.reduce((a, h) => a + h.running.libp2p.getConnections().length, 0) / n
    const asks = net.hosts.reduce((a, h) => a + filler(h.running).asks, 0)
    const tables = net.tableSizes()
    const line = `connections per host ${c.toFixed(1)}, routing table min ${Math.min(...tables)} max ${Math.max(...tables)}, table-filler asks in all hosts since the last line ${asks - asked}`
    asked = asks
    return line
  }
  const out = (line: string): void => { process.stdout.write(`${line}\n`) }
  out(`${n} hosts, ${win} s windows; % of a core per host`)
  let before = await window(n, win * 1000)
  out(`${before.toFixed(3).padStart(7)}  everything running (${conns()})`)
  for (const [name, off] of steps) {
    for (const h of net.hosts) await off(h.running)
    await sleep(2_000)
    const now = await window(n, win * 1000)
    out(`${now.toFixed(3).padStart(7)}  without ${name}: ${(before - now).toFixed(3)} less (${conns()})`)
    before = now
  }
  await net.stop()
  process.exit(0)
}

main().catch((err) => { process.stderr.write(`${String(err?.stack ?? err)}\n`); process.exit(1) })
