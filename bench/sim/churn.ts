// Churn: 10 % of the hosts leave and come back while sends run, half of them
// with their store (same node keys, same outbox and inbox), half without (a
// host that lost its disk: same host key, a new node under the same name).
// Nothing the receiver acknowledged may be missing from a kept inbox; the
// time until a returned host's fresh card resolves from another host is
// measured.
import { nowMs, p50 } from '../lib/stats.js'
import type { SimHost } from './host.js'
import { parentOf, sleep, type SimNet } from './net.js'
import type { Figures, SimContext } from './scenarios.js'
import { acknowledged, bump, countInboxes, grantAll, pool, randomPairs, reasons, sendOne, waitDelivered, type Sent } from './traffic.js'

/** How long the leaving hosts stay away, ms. */
const AWAY_MS = 10_000
/** How long a returned host's card may take to resolve again, ms. */
const RESOLVE_AGAIN_WAIT = 120_000
/** How long sends may take to land after the churn, ms. */
const SETTLE_WAIT = 300_000

function pickLeavers (ctx: SimContext, n: number): number[] {
  const out = new Set<number>()
  const want = Math.max(2, Math.round(n / 10))
  while (out.size < Math.min(want, n - 1)) out.add(1 + Math.floor(ctx.rnd() * (n - 1)))
  return [...out]
}

/** Poll a DHT lookup of `h`'s node from `observer` until it returns a card issued since `since`; ms, or undefined. */
async function resolveAgain (observer: SimHost, h: SimHost, since: number): Promise<number | undefined> {
  const id = h.running.nodes.get(h.name)?.record.id
  const deadline = Date.now() + RESOLVE_AGAIN_WAIT
  while (id !== undefined && Date.now() < deadline) {
    const cards = await observer.running.discovery?.resolve(id).catch(() => []) ?? []
    if (cards.some((vc) => vc.nodeId === id && vc.issuedAt >= since - 1000)) return Date.now() - since
    await sleep(500)
  }
  return undefined
}

async function leaveAndReturn (net: SimNet, leavers: number[], keep: (i: number) => boolean): Promise<Map<number, number>> {
  await Promise.all(leavers.map(async (i) => await net.hosts[i].stop()))
  await sleep(AWAY_MS)
  const back = new Map<number, number>()
  await Promise.all(leavers.map(async (i) => {
    const parent = net.hosts[parentOf(i)]
    const peers = parent.host !== undefined ? [parent.addr] : [net.hosts[0].addr]
    await net.hosts[i].start(peers, keep(i))
    back.set(i, Date.now())
  }))
  return back
}

export async function churn (ctx: SimContext, net: SimNet): Promise<Figures> {
  const leavers = pickLeavers(ctx, net.size)
  const wiped = new Set(leavers.filter((_, k) => k % 2 === 1))
  const pairs = randomPairs(net.size, ctx.sends, ctx.rnd)
  const grantFailures = new Map<string, number>()
  await grantAll(net.hosts, pairs, ctx.concurrency, grantFailures)
  const refused = new Map<string, number>()
  const sent: Sent[] = []
  const send = async (list: typeof pairs, offset: number): Promise<void> => {
    await pool(list, ctx.concurrency, async (p, k) => { const s = await sendOne(net.hosts, p, offset + k, refused); if (s !== undefined) sent.push(s) })
  }
  const half = Math.floor(pairs.length / 2)
  const first = send(pairs.slice(0, half), 0)
  await sleep(1000)
  const ackedBefore = await acknowledged(net.hosts, sent) // what the wiped senders' receipts said before their disk went
  const t0 = nowMs()
  const back = await leaveAndReturn(net, leavers, (i) => !wiped.has(i))
  ctx.log(`${leavers.length} hosts left and returned in ${Math.round(nowMs() - t0)} ms (${wiped.size} without their store)`)
  await first
  await send(pairs.slice(half), half)
  const again = await Promise.all(leavers.map(async (i) => {
    const observer = net.hosts.find((h) => h.host !== undefined && !leavers.includes(h.index)) ?? net.hosts[0]
    return await resolveAgain(observer, net.hosts[i], back.get(i) ?? Date.now())
  }))
  const nameErrors = new Map<string, number>()
  for (const i of leavers) await net.hosts[0].running.resolver.resolve(net.hosts[i].name).catch((err) => bump(nameErrors, err))
  const toKept = sent.filter((s) => !wiped.has(s.pair.to))
  const c = await waitDelivered(net.hosts, toKept, SETTLE_WAIT)
  const acked = new Map([...ackedBefore, ...await acknowledged(net.hosts, sent)].map((s) => [s.id, s]))
  const ackedKept = [...acked.values()].filter((s) => !wiped.has(s.pair.to))
  const ackedCount = await countInboxes(net.hosts, ackedKept)
  const toWiped = await countInboxes(net.hosts, sent.filter((s) => wiped.has(s.pair.to)))
  const times = again.filter((t): t is number => t !== undefined)
  ctx.log(`churn: ${sent.length} accepted, to kept inboxes ${c.delivered}/${toKept.length} (${c.duplicated} duplicated), acknowledged ${acked.size}, acknowledged but missing ${ackedCount.lost}; cards again in p50 ${times.length > 0 ? p50(times) : 'n/a'} ms; refused: ${reasons(refused) || 'none'}`)
  return {
    'churn.left': leavers.length,
    'churn.wiped': wiped.size,
    'churn.accepted': sent.length,
    'churn.to.kept': toKept.length,
    'churn.delivered.kept': c.delivered,
    'churn.duplicated': c.duplicated,
    'churn.acknowledged': acked.size,
    'churn.acknowledged.lost': ackedCount.lost,
    'churn.to.wiped.delivered': `${toWiped.delivered}/${toWiped.delivered + toWiped.lost}`,
    'churn.card.again.p50.ms': times.length > 0 ? Math.round(p50(times)) : 'n/a',
    'churn.card.again.max.ms': times.length > 0 ? Math.round(Math.max(...times)) : 'n/a',
    'churn.card.again.missing': again.length - times.length,
    'churn.name.after.why': reasons(nameErrors) || 'all resolve',
    'churn.refused.why': reasons(refused) || 'none',
    'churn.grant.failures': reasons(grantFailures) || 'none'
  }
}
