import type { Libp2p } from '@libp2p/interface'
import { PresenceLink, type PresenceWire } from './presence-protocol.js'
import { ReceiptLink, signReceipt, type ReceiptBody } from './receipts-protocol.js'
import { decodePacket } from '../packet/codec.js'
import type { ConsumptionStore } from '../store/consumption.js'
import type { Committer, RawDb, WriteOp } from '../store/db.js'
import type { InboxEntry, InboxStore } from '../store/inbox.js'
import type { LocalNode } from '../store/nodes.js'
import type { Doomed, OutboxEntry, OutboxStore } from '../store/outbox.js'
import { deliveredOps, ordered, ReceiptStore, stateOp, type ReceiptState, type SentMeta, type SentReceipt } from '../store/receipts.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'

// Receipts on a host (docs/DELIVERY.md "Receipts"). As a sender: nothing is
// written when a message is sent (queued = its outbox entry, plus a note in
// memory); `delivered` is written in the batch that removes the outbox entry
// on ack, `refused`/`dead` in the dead-letter batch, pushed/read from the
// receiving host one batch per receipt frame. As a receiver: when a session
// pushes or reads a message, a receipt signed by the receiving node goes to
// the sender's host (unless the packet says no_receipt), queued durably until
// that host takes it.

/**
 * remote sends remembered in memory until they settle (beyond: read from the
 * outbox). 8,192 covers what is in flight to hosts that answer (T2 keeps 512
 * sends in flight); at 65,536 the notes of sends queued for a host that is
 * down were ~13 MiB of a sender's V8 heap holding 100,000 (docs/PERFORMANCE.md,
 * session 7), and an evicted note only costs a packet decode when its ack comes.
 */
const PENDING_SENDS = 8192

/** The components receipts use (the composition root passes them). */
export interface ReceiptDeps {
  db: RawDb
  committer: Committer
  libp2p: Libp2p
  inbox: InboxStore
  outbox: OutboxStore
  consumption: ConsumptionStore
  /** a local node by id or name */
  localNode: (idOrName: string) => LocalNode | undefined
  /** the peer id of the host serving a remote node, if known */
  hostOf: (nodeId: string) => Promise<string | undefined>
  /** a send's target (name or id) as the sender resolved it: its node id and host ("local") */
  resolve: (to: string) => Promise<{ id: string, host: string } | undefined>
  /** local node names whose `read` is never reported */
  hideRead: () => readonly string[]
  log: Logger
}

/** a remote send not settled yet: what its outbox entry does not say cheaply */
interface Pending { q: number, off: boolean, from: string, to: string }

/** The meta of a queued message from its outbox entry (after a restart: the packet is read). */
function metaOfEntry (e: OutboxEntry): SentMeta {
  const p = decodePacket(e.packet)
  return { to: e.to, from: e.from, dest: e.dest, q: p.ts, ...(p.no_receipt === true ? { off: true } : {}) }
}

/** A message is reported only to the host it came from, by the node it went to. */
export class ReceiptService {
  readonly store: ReceiptStore
  readonly link: ReceiptLink
  /** presence of nodes (attached now, last read), asked of the hosts that serve them */
  readonly presence: PresenceLink
  private readonly pending = new Map<string, Pending>()

  constructor (private readonly host: ReceiptDeps) {
    this.store = new ReceiptStore(host.db, host.committer)
    this.link = new ReceiptLink({ libp2p: host.libp2p, store: this.store, accept: async (peer, bodies) => await this.accept(peer, bodies), log: host.log })
    this.presence = new PresenceLink({ libp2p: host.libp2p, presenceOf: (id) => this.presenceOf(id), log: host.log })
  }

  private presenceOf (nodeId: string): PresenceWire | undefined {
    const node = this.host.localNode(nodeId)
    if (node === undefined || node.record.id !== nodeId) return undefined
    const s = this.host.consumption.sessionNow(nodeId)
    const ms = (t: string | undefined): number | undefined => t === undefined ? undefined : Date.parse(t)
    const hidden = this.host.hideRead().includes(node.record.name) // a node that hides read hides when it read too
    return { a: s.attached, ...(s.last_read === undefined || hidden ? {} : { r: ms(s.last_read) }), ...(s.last_attach === undefined ? {} : { t: ms(s.last_attach) }) }
  }

  async start (): Promise<void> {
    this.store.on('error-log', (err: unknown) => this.host.log(`receipt records not stored: ${errorMessage(err)}`))
    this.host.consumption.on('pushed', (nodeId: string, seqs: number[]) => { void this.report(nodeId, seqs, 'pushed') })
    this.host.consumption.on('read', (nodeId: string, seqs: number[]) => { void this.report(nodeId, seqs, 'read') })
    await this.link.start()
    await this.presence.start()
  }

  async stop (): Promise<void> {
    await this.presence.stop()
    await this.link.stop()
  }

  /** A message just queued for a remote host: remembered in memory only (`to` as the send named it). */
  queued (p: { id: string, from: string, to: string, off: boolean }, now = Date.now()): void {
    if (this.pending.size >= PENDING_SENDS) this.pending.delete(this.pending.keys().next().value as string)
    this.pending.set(p.id, { q: now, off: p.off, from: p.from, to: p.to })
  }

  /** A message delivered into a local inbox at send time. */
  local (p: { id: string, to: string, from: string, off: boolean }): void {
    this.store.local({ id: p.id, state: 'delivered', at: Date.now(), meta: { to: p.to, from: p.from, dest: 'local', ...(p.off ? { off: true } : {}) } })
  }

  /** Whether metaOf reads this entry's packet: only for a send no longer remembered (a link lets sent large packets go). */
  readsPacket (e: OutboxEntry): boolean { return !this.pending.has(e.packetId) }

  private metaOf (e: OutboxEntry): SentMeta {
    const p = this.pending.get(e.packetId)
    // forgotten between the ack and this batch (8,192 sends later) with its packet let go: what the entry says
    if (p === undefined) return e.packet.byteLength === 0 ? { to: e.to, from: e.from, dest: e.dest } : metaOfEntry(e)
    // built field by field (no spread): this runs once per acked packet
    const meta: SentMeta = { to: e.to, from: e.from, dest: e.dest, q: p.q }
    if (p.off) meta.off = true
    return meta
  }

  /** The delivered records of entries just acked, for the batch that removes them from the outbox. */
  deliveredOps (live: OutboxEntry[]): WriteOp[] {
    const at = Date.now()
    return deliveredOps(live.map((e) => ({ id: e.packetId, meta: this.metaOf(e) })), at)
  }

  /** The refused/dead records of dead letters, for the dead-letter batch. */
  deadOps (items: Doomed[]): WriteOp[] {
    const at = Date.now()
    return items.map((d) => stateOp({ id: d.entry.packetId, state: d.code === 'TTL_EXPIRED' ? 'dead' : 'refused', at, reason: `${d.code}: ${d.reason}`, meta: this.metaOf(d.entry) }))
  }

  /** Their records are written: forget them in memory, wake waiters. */
  settled (entries: OutboxEntry[]): void {
    for (const e of entries) this.pending.delete(e.packetId)
    if (this.store.waited()) this.store.changed(entries.map((e) => e.packetId))
  }

  /** What this host knows of a message it sent, or undefined. `queue`: look only there for it among the queued (else all queues). */
  async history (id: string, queue?: Map<string, OutboxEntry>): Promise<SentReceipt | undefined> {
    const noted = this.pending.get(id) // taken first: an ack may settle it (records written, note dropped) while the store is read
    let { meta, events } = await this.store.records(id)
    if (meta === undefined) meta = await this.queuedMeta(id, noted, queue)
    // not queued (any more): it may have settled since the first read
    if (meta === undefined && noted === undefined) ({ meta, events } = await this.store.records(id))
    const m = meta
    if (m === undefined) return undefined
    const all = m.q === undefined ? events : [{ state: 'queued' as const, at: m.q }, ...events]
    return { id, ...m, events: ordered(all) }
  }

  /** The meta of a message still queued: from memory, else from its outbox entry (a scan: after a restart only). */
  private async queuedMeta (id: string, p: Pending | undefined, queue?: Map<string, OutboxEntry>): Promise<SentMeta | undefined> {
    if (p !== undefined) {
      const target = await this.host.resolve(p.to).catch(() => undefined)
      return target === undefined ? undefined : { to: target.id, from: p.from, dest: target.host, q: p.q, ...(p.off ? { off: true } : {}) }
    }
    const e = queue !== undefined ? queue.get(id) : await this.findQueued(id)
    return e === undefined ? undefined : metaOfEntry(e)
  }

  private async findQueued (id: string): Promise<OutboxEntry | undefined> {
    for (const dest of this.host.outbox.destinations()) {
      const e = (await this.queueOf(dest)).get(id)
      if (e !== undefined) return e
    }
    return undefined
  }

  private async queueOf (dest: string): Promise<Map<string, OutboxEntry>> {
    const entries = await this.host.outbox.list(dest, undefined, Math.max(1, this.host.outbox.depthOf(dest)))
    return new Map(entries.map((e) => [e.packetId, e]))
  }

  /** The sender-side check of receipts that came in one frame over the mesh from `peer`: undefined to accept, or why not. */
  private async accept (peer: string, bodies: ReceiptBody[]): Promise<Array<string | undefined>> {
    let queue: Map<string, OutboxEntry> | undefined // the peer's queue, read at most once per frame
    const out: Array<string | undefined> = []
    for (const body of bodies) {
      let r = await this.history(body.p, new Map())
      if (r === undefined && this.host.outbox.depthOf(peer) > 0) r = await this.history(body.p, queue ??= await this.queueOf(peer))
      out.push(refusal(r, peer, body))
    }
    return out
  }

  /** A session of local node `nodeId` pushed or read these seqs: tell each sender. */
  private async report (nodeId: string, seqs: number[], state: ReceiptState): Promise<void> {
    try {
      const node = this.host.localNode(nodeId)
      if (node === undefined) return
      if (state === 'read' && this.host.hideRead().includes(node.record.name)) return
      const at = Date.now()
      const local: Array<{ id: string, state: ReceiptState, at: number }> = []
      const remote: Array<{ dest: string, packetId: string, state: ReceiptState, bytes: Uint8Array }> = []
      for (const entry of await this.entriesOf(nodeId, seqs)) {
        const p = decodePacket(entry.packet)
        if (p.from === p.to || p.no_receipt === true) continue // a host notice to the node itself; the sender asked for none
        if (this.host.localNode(p.from) !== undefined) { local.push({ id: p.id, state, at }); continue }
        const dest = await this.host.hostOf(p.from).catch(() => undefined)
        if (dest === undefined) continue
        remote.push({ dest, packetId: p.id, state, bytes: signReceipt(node.key, { v: 1, p: p.id, n: nodeId, s: state, t: at }) })
      }
      await this.store.record(local, true)
      await this.store.queue(remote)
      if (remote.length > 0) this.link.kick()
    } catch (err) {
      this.host.log(`receipts for ${nodeId}: ${errorMessage(err)}`)
    }
  }

  /** The inbox entries of these seqs: one range read per run of consecutive seqs. */
  private async entriesOf (nodeId: string, seqs: number[]): Promise<InboxEntry[]> {
    const sorted = [...new Set(seqs)].sort((x, y) => x - y)
    const out: InboxEntry[] = []
    for (let i = 0; i < sorted.length;) {
      let j = i
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++
      const run = await this.host.inbox.read(nodeId, sorted[i] - 1, j - i + 1)
      for (const e of run) if (e.seq >= sorted[i] && e.seq <= sorted[j]) out.push(e)
      i = j + 1
    }
    return out
  }
}

/** Why a receipt from `peer` is refused, or undefined. */
function refusal (r: SentReceipt | undefined, peer: string, body: ReceiptBody): string | undefined {
  if (body.s !== 'pushed' && body.s !== 'read') return `BAD_STATE: a receiving host reports pushed or read, not ${body.s}`
  if (r === undefined) return `UNKNOWN_MESSAGE: this host sent no message ${body.p}`
  if (r.off === true) return `NO_RECEIPT: the sender asked for no receipts for ${body.p}`
  if (r.to !== body.n) return `WRONG_NODE: message ${body.p} went to ${r.to}, not ${body.n}`
  if (r.dest !== peer) return `WRONG_HOST: message ${body.p} was handed to ${r.dest}, not ${peer}`
  return undefined
}
