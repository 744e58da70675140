// Sends between simulated hosts, as T7 makes them: the target's node grants
// the sender's node (the grant travels host to host), the sender's host
// waits until it holds the grant, then sends by name through the control
// API's own `send` handler (sender + receipt history). Delivery is counted in
// the target inboxes by packet id: delivered, lost, duplicated.
import { renderEntry } from '../../src/packet/render.js'
import { receiptMethods } from '../../src/host/api-receipts.js'
import { STATE_RANK, stateOf } from '../../src/store/receipts.js'
import type { SimHost } from './host.js'
import { sleep } from './net.js'

/** How long the sender's host may wait for a grant to arrive, ms. */
export const GRANT_WAIT = 60_000

export interface Pair { from: number, to: number }

export interface Sent { k: number, pair: Pair, id: string, at: number }

export function randomPairs (n: number, count: number, rnd: () => number, among?: number[]): Pair[] {
  const pool = among ?? Array.from({ length: n }, (_, i) => i)
  const out: Pair[] = []
  while (out.length < count) {
    const from = pool[Math.floor(rnd() * pool.length)]
    const to = pool[Math.floor(rnd() * pool.length)]
    if (from !== to) out.push({ from, to })
  }
  return out
}

/** Run `work` over items with at most `limit` in flight. */
export async function pool<T> (items: T[], limit: number, work: (item: T, k: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const k = next++
      await work(items[k], k)
    }
  }))
}

export function bump (m: Map<string, number>, err: unknown): void {
  const reason = (err instanceof Error ? err.message : String(err)).split(/[(:]/)[0].trim().slice(0, 80)
  m.set(reason, (m.get(reason) ?? 0) + 1)
}

export function reasons (m: Map<string, number>): string {
  return [...m].map(([r, c]) => `${c} x ${r}`).join('; ')
}

/** Every distinct (target grants sender) pair issued, at most `limit` at once; failures counted by reason. */
export async function grantAll (hosts: SimHost[], pairs: Pair[], limit: number, failures: Map<string, number>): Promise<void> {
  const distinct = [...new Map(pairs.map((p) => [`${p.from}>${p.to}`, p])).values()]
  await pool(distinct, limit, async (p) => {
    const target = hosts[p.to]
    // on a loaded machine the target's host may not have learnt the sender's name yet: ask again, as an operator would
    const deadline = Date.now() + GRANT_WAIT
    for (;;) {
      try {
        await target.running.acl.grant({ as: target.name, to: hosts[p.from].name })
        return
      } catch (err) {
        if (!(err instanceof Error && err.name === 'UnknownNodeError' && Date.now() < deadline)) { bump(failures, err); return }
        await sleep(250)
      }
    }
  })
  // the sender's host holds each grant once it travelled there
  const deadline = Date.now() + GRANT_WAIT
  let missing = distinct
  while (missing.length > 0 && Date.now() < deadline) {
    missing = missing.filter((p) => !holds(hosts, p))
    if (missing.length > 0) await sleep(250)
  }
  for (let k = 0; k < missing.length; k++) bump(failures, new Error('grant not held by the sender\'s host in time'))
}

function holds (hosts: SimHost[], p: Pair): boolean {
  const s = hosts[p.from]
  const t = hosts[p.to]
  if (s.host === undefined || t.host === undefined) return true // away: nothing to wait for
  const sid = s.running.nodes.get(s.name)?.record.id
  const tid = t.running.nodes.get(t.name)?.record.id
  return sid !== undefined && tid !== undefined && s.running.acl.store.heldFor(sid, tid).length > 0
}

/** One send through the control API's `send` handler; undefined when it was refused (reason counted). */
export async function sendOne (hosts: SimHost[], p: Pair, k: number, failures: Map<string, number>): Promise<Sent | undefined> {
  const s = hosts[p.from]
  if (s.host === undefined) { bump(failures, new Error('sender away')); return undefined }
  try {
    const r = await receiptMethods(s.running).send.call({ as: s.name, to: hosts[p.to].name, text: `sim ${k}` })
    return { k, pair: p, id: r.id, at: Date.now() }
  } catch (err) {
    bump(failures, err)
    return undefined
  }
}

export interface Count { delivered: number, lost: number, duplicated: number }

/** How many times each accepted packet is in its target's inbox, now. */
export async function countInboxes (hosts: SimHost[], sent: Sent[]): Promise<Count> {
  const byTarget = new Map<number, Sent[]>()
  for (const s of sent) byTarget.set(s.pair.to, [...(byTarget.get(s.pair.to) ?? []), s])
  let delivered = 0
  let duplicated = 0
  for (const [to, list] of byTarget) {
    const h = hosts[to]
    const seen = new Map<string, number>()
    if (h.host !== undefined) {
      const node = h.running.nodes.get(h.name)
      if (node !== undefined) {
        for (const e of await h.running.inbox.read(node.record.id, 0, Number.MAX_SAFE_INTEGER)) {
          const id = renderEntry(e, () => '').id
          seen.set(id, (seen.get(id) ?? 0) + 1)
        }
      }
    }
    for (const s of list) {
      const c = seen.get(s.id) ?? 0
      if (c >= 1) delivered++
      if (c > 1) duplicated++
    }
  }
  return { delivered, lost: sent.length - delivered, duplicated }
}

/** Wait until every accepted send is in its inbox (or the deadline); the final count. */
export async function waitDelivered (hosts: SimHost[], sent: Sent[], timeoutMs: number): Promise<Count> {
  const deadline = Date.now() + timeoutMs
  let c = await countInboxes(hosts, sent)
  while (c.lost > 0 && Date.now() < deadline) {
    await sleep(1000)
    c = await countInboxes(hosts, sent)
  }
  return c
}

/** The sends whose receipt on the sender's host says the target's host acknowledged them. */
export async function acknowledged (hosts: SimHost[], sent: Sent[]): Promise<Sent[]> {
  const out: Sent[] = []
  for (const s of sent) {
    const h = hosts[s.pair.from]
    if (h.host === undefined) continue
    const r = await h.running.receipts.history(s.id)
    if (r !== undefined && STATE_RANK[stateOf(r)] >= STATE_RANK.delivered && STATE_RANK[stateOf(r)] < STATE_RANK.dead) out.push(s)
  }
  return out
}
