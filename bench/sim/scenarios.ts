// The simulation's scenarios over one formed net: formation, lookup and
// delivery (churn is in churn.ts). Each returns named figures.
import { nowMs, p50, p99, mean } from '../lib/stats.js'
import { SimNet, sleep } from './net.js'
import { instrumentHops, queryHops, usage } from './probe.js'
import { bump, grantAll, pool, randomPairs, reasons, sendOne, waitDelivered, type Sent } from './traffic.js'

export type Figures = Record<string, number | string>

export interface SimContext {
  hosts: number
  latency: number
  lookups: number
  sends: number
  /** DHT lookups / sends in flight at once */
  concurrency: number
  rnd: () => number
  log: (line: string) => void
}

/** How long formation may take before it is reported unhealthy, ms (grows with N). */
function formationTimeout (n: number): number { return 120_000 + n * 600 }

/** How long the idle formed net is watched for CPU use, ms. */
const IDLE_SAMPLE = 10_000

const MiB = 1024 * 1024

/** Start N hosts in the tree, wait for the bootstrap card exchange and healthy routing tables; cost per host. */
export async function formation (ctx: SimContext, net: SimNet): Promise<Figures> {
  const u0 = usage()
  const t0 = nowMs()
  await net.grow(ctx.hosts)
  const started = nowMs() - t0
  ctx.log(`${ctx.hosts} hosts started in ${Math.round(started)} ms`)
  const unjoined = await net.waitJoined(formationTimeout(ctx.hosts))
  const joined = nowMs() - t0
  const healthy = await net.waitHealthy(formationTimeout(ctx.hosts))
  const formed = nowMs() - t0
  const u1 = usage()
  const sizes = net.tableSizes()
  ctx.log(`joined in ${Math.round(joined)} ms (${unjoined} not), routing tables ${healthy ? 'healthy' : 'NOT healthy'} at ${Math.round(formed)} ms: min ${Math.min(...sizes)}, p50 ${p50(sizes)}`)
  await sleep(IDLE_SAMPLE)
  const u2 = usage()
  const n = ctx.hosts
  return {
    'formation.started.ms': Math.round(started),
    'formation.joined.ms': Math.round(joined),
    'formation.unjoined': unjoined,
    'formation.ms': Math.round(formed),
    'formation.healthy': healthy ? 'yes' : 'no',
    'formation.table.min': Math.min(...sizes),
    'formation.table.p50': p50(sizes),
    'formation.cpu.ms.per.host': Math.round((u1.cpuMs - u0.cpuMs) / n),
    'idle.cpu.pct.per.host': +(100 * (u2.cpuMs - u1.cpuMs) / IDLE_SAMPLE / n).toFixed(3),
    'memory.rss.MiB.per.host': +((u2.rssBytes - u0.rssBytes) / n / MiB).toFixed(2),
    'memory.heap.MiB.per.host': +((u2.heapBytes - u0.heapBytes) / n / MiB).toFixed(2),
    'memory.rss.MiB': Math.round(u2.rssBytes / MiB)
  }
}

/**
 * Resolutions by name of random remote nodes through the DHT (discovery's
 * resolve: the name record, then the card; what a host does for a name it
 * holds no card for), and the same number through the whole resolver (local
 * nodes, known cards, card exchange, then the DHT), as `amesh send` does.
 */
export async function lookup (ctx: SimContext, net: SimNet): Promise<Figures> {
  for (const h of net.hosts) instrumentHops(h.running)
  queryHops.length = 0
  const pairs = randomPairs(net.size, ctx.lookups, ctx.rnd)
  const dht: number[] = []
  const misses = new Map<string, number>()
  const t0 = nowMs()
  await pool(pairs, ctx.concurrency, async (p) => {
    const from = net.hosts[p.from].running
    const want = net.hosts[p.to].running.nodes.get(net.hosts[p.to].name)?.record.id
    const s = nowMs()
    try {
      const cards = await from.discovery?.resolve(net.hosts[p.to].name) ?? []
      if (cards.some((vc) => vc.nodeId === want)) dht.push(nowMs() - s)
      else bump(misses, new Error('not found'))
    } catch (err) { bump(misses, err) }
  })
  const wall = nowMs() - t0
  const hops = queryHops.filter((h) => h > 0)
  const resolved: number[] = []
  await pool(pairs, ctx.concurrency, async (p) => {
    const s = nowMs()
    try { await net.hosts[p.from].running.resolver.resolve(net.hosts[p.to].name); resolved.push(nowMs() - s) } catch (err) { bump(misses, err) }
  })
  ctx.log(`${ctx.lookups} DHT lookups in ${Math.round(wall)} ms, ${dht.length} found; misses: ${reasons(misses) || 'none'}`)
  return {
    'lookup.count': ctx.lookups,
    'lookup.concurrency': ctx.concurrency,
    'lookup.dht.p50.ms': dht.length > 0 ? Math.round(p50(dht)) : 'n/a',
    'lookup.dht.p99.ms': dht.length > 0 ? Math.round(p99(dht)) : 'n/a',
    'lookup.dht.misses': ctx.lookups - dht.length,
    'lookup.hops.mean': hops.length > 0 ? +mean(hops).toFixed(2) : 'n/a',
    'lookup.hops.max': hops.length > 0 ? Math.max(...hops) : 'n/a',
    'lookup.resolve.p50.ms': resolved.length > 0 ? +p50(resolved).toFixed(2) : 'n/a',
    'lookup.resolve.p99.ms': resolved.length > 0 ? +p99(resolved).toFixed(2) : 'n/a',
    'lookup.misses.why': reasons(misses) || 'none'
  }
}

/** How long accepted sends may take to land in their inboxes, ms. */
const DELIVERY_WAIT = 300_000

/** Sends between random pairs, each pair granted first; every accepted send counted in its target inbox. */
export async function delivery (ctx: SimContext, net: SimNet): Promise<Figures> {
  const pairs = randomPairs(net.size, ctx.sends, ctx.rnd)
  const grantFailures = new Map<string, number>()
  const g0 = nowMs()
  await grantAll(net.hosts, pairs, ctx.concurrency, grantFailures)
  const granted = nowMs() - g0
  ctx.log(`grants for ${ctx.sends} sends in ${Math.round(granted)} ms; failures: ${reasons(grantFailures) || 'none'}`)
  const refused = new Map<string, number>()
  const sent: Sent[] = []
  const t0 = nowMs()
  await pool(pairs, ctx.concurrency, async (p, k) => {
    const s = await sendOne(net.hosts, p, k, refused)
    if (s !== undefined) sent.push(s)
  })
  const accepted = nowMs() - t0
  const c = await waitDelivered(net.hosts, sent, DELIVERY_WAIT)
  const all = nowMs() - t0
  ctx.log(`${sent.length} of ${ctx.sends} sends accepted in ${Math.round(accepted)} ms, ${c.delivered} delivered, ${c.lost} lost, ${c.duplicated} duplicated, in ${Math.round(all)} ms; refused: ${reasons(refused) || 'none'}`)
  return {
    'delivery.sends': ctx.sends,
    'delivery.accepted': sent.length,
    'delivery.delivered': c.delivered,
    'delivery.lost': c.lost,
    'delivery.duplicated': c.duplicated,
    'delivery.grants.ms': Math.round(granted),
    'delivery.ms': Math.round(all),
    'delivery.per.s': Math.round(c.delivered / (all / 1000)),
    'delivery.refused.why': reasons(refused) || 'none',
    'delivery.grant.failures': reasons(grantFailures) || 'none'
  }
}
