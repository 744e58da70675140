// Helpers for the delivery fault tests: pairs of real `amesh up` daemons on
// loopback with fixed ports (so a restarted daemon comes back at the same
// address), driven through their control sockets.
import { createServer } from 'node:net'
import type { ControlClient } from '../../src/control/client.js'
import { Committer, batchTarget, openDb } from '../../src/store/db.js'
import { InboxStore } from '../../src/store/inbox.js'
import { decodePacket } from '../../src/packet/codec.js'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { processAlive } from '../../src/util/process-alive.js'

export interface Row { seq: number, id: string, from: string, to: string, signal: string, payload: { text?: string, context?: string }, in_reply_to?: string }

export interface Status {
  pid: number
  rss_bytes: number
  store_bytes: number
  nodes: Array<{ name: string, id: string, inbox: { last: number, cursor: number, unacked: number } }>
  outbox: { queued: number, dead: number, by_destination: Record<string, number> }
  links: Record<string, string>
}

/** A free loopback TCP port (bound and released; good enough for tests). */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

/** One control call on a fresh connection. */
export async function call<T> (h: TestHost, method: string, params: object = {}): Promise<T> {
  const c = await h.client()
  try { return await c.request<T>(method, params) } finally { c.close() }
}

export async function status (h: TestHost): Promise<Status> {
  return await call<Status>(h, 'status')
}

/** All inbox rows of a node after `after` (not just after the cursor). */
export async function inboxRows (h: TestHost, node: string, after = 0): Promise<Row[]> {
  const out: Row[] = []
  let from = after
  for (;;) {
    const page = await call<Row[]>(h, 'inbox.read', { node, after: from, limit: 10_000 })
    out.push(...page)
    // a page also ends early at ~16 MiB of packets (DELIVERY.md): only an empty page is the end
    if (page.length === 0) return out
    from = page[page.length - 1].seq
  }
}

export interface Pair { a: TestHost, b: TestHost, aPort: number, bPort: number }

/**
 * Sender host `a` (nodes `senders`) and receiver host `b` (node `bob`, which
 * grants each sender MESSAGE), both at fixed ports, `a` joined to `b` (so it
 * redials `b` after a restart); returns once `a` can resolve `bob` and holds every grant.
 */
export async function startPair (opts: { a?: Record<string, unknown>, b?: Record<string, unknown>, senders?: string[], bHome?: string } = {}): Promise<Pair> {
  const senders = opts.senders ?? ['alice']
  const t0 = Date.now()
  const lap = (what: string): void => { if (process.env.AMESH_TEST_TIMING !== undefined) process.stderr.write(`startPair ${what} +${Date.now() - t0} ms\n`) }
  const [aPort, bPort] = [await freePort(), await freePort()]
  const listen = (p: number): string[] => [`/ip4/127.0.0.1/tcp/${p}`]
  const [b, a] = await Promise.all([
    startHost({ config: { listen: listen(bPort), ...opts.b }, home: opts.bHome }),
    startHost({ config: { listen: listen(aPort), ...opts.a } })
  ])
  await call(a, 'join', { addr: b.addr })
  lap('hosts up')
  await call(b, 'node.add', { name: 'bob' })
  for (const s of senders) await call(a, 'node.add', { name: s })
  const names = async (h: TestHost): Promise<string[]> => (await call<Array<{ name: string }>>(h, 'nodes')).map((n) => n.name)
  await waitFor(async () => { const n = await names(b); return senders.every((s) => n.includes(s)) }, 30_000, 'b to learn the senders')
  lap('b knows senders')
  await waitFor(async () => (await names(a)).includes('bob'), 30_000, 'a to learn bob')
  lap('a knows bob')
  for (const s of senders) {
    const g = await call<{ token_id: string }>(b, 'grant', { as: 'bob', to: s, signals: ['MESSAGE'] })
    await waitFor(async () => (await call<{ held: Array<{ token_id: string }> }>(a, 'grants')).held.some((t) => t.token_id === g.token_id), 20_000, `a to hold the grant for ${s}`)
  }
  lap('grants held')
  return { a, b, aPort, bPort }
}

/** Send texts one after another (each returns once durable); stops at the first failure. */
export async function sendSeq (c: ControlClient, as: string, to: string, texts: string[], sent: string[] = [], opts: { stop?: () => boolean } = {}): Promise<string[]> {
  for (const text of texts) {
    if (opts.stop?.() === true) break
    const r = await c.call('send', { as, to, text })
    sent.push(r.id)
  }
  return sent
}

/** Read a stopped (or killed) host's inbox straight from its LevelDB. */
export async function inboxOnDisk (h: TestHost, nodeId: string): Promise<Array<{ seq: number, id: string, text: string }>> {
  const db = await openDb(`${h.home}/store`)
  try {
    const inbox = new InboxStore(db, new Committer(batchTarget(db), 'none'), Number.MAX_SAFE_INTEGER)
    const entries = await inbox.read(nodeId, 0, 1_000_000)
    return entries.map((e) => { const p = decodePacket(e.packet); return { seq: e.seq, id: p.id, text: p.payload.text ?? '' } })
  } finally {
    await db.close()
  }
}

/** Assert-friendly: the ids that occur more than once. */
export function duplicates (ids: string[]): string[] {
  const seen = new Set<string>()
  const dup = new Set<string>()
  for (const id of ids) { if (seen.has(id)) dup.add(id); seen.add(id) }
  return [...dup]
}

/** Per sender, the texts must come in send order: "<sender> <n>" with n increasing. */
export function perPairOrdered (texts: string[]): boolean {
  const last = new Map<string, number>()
  for (const t of texts) {
    const [who, n] = t.split(' ')
    const k = Number(n)
    if ((last.get(who) ?? -Infinity) >= k) return false
    last.set(who, k)
  }
  return true
}

export async function waitGone (pid: number, timeout = 10_000): Promise<void> {
  await waitFor(async () => !processAlive(pid), timeout, `pid ${pid} to exit`)
}
