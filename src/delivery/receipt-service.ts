import type { Libp2p } from '@libp2p/interface'
import { ReceiptLink, signReceipt, type ReceiptBody } from './receipts-protocol.js'
import { decodePacket } from '../packet/codec.js'
import type { ConsumptionStore } from '../store/consumption.js'
import type { Committer, RawDb } from '../store/db.js'
import type { InboxStore } from '../store/inbox.js'
import type { LocalNode } from '../store/nodes.js'
import type { Doomed, OutboxEntry } from '../store/outbox.js'
import { ReceiptStore, type ReceiptState } from '../store/receipts.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'

// Receipts on a host (docs/DELIVERY.md "Receipts"). As a sender: a history per
// message sent (queued/delivered from its own delivery, pushed/read/refused/
// dead from the receiving host). As a receiver: when a session pushes or reads
// a message, a receipt signed by the receiving node goes to the sender's host,
// queued durably until that host takes it.

/** The components receipts use (the composition root passes them). */
export interface ReceiptDeps {
  db: RawDb
  committer: Committer
  libp2p: Libp2p
  inbox: InboxStore
  consumption: ConsumptionStore
  /** a local node by id or name */
  localNode: (idOrName: string) => LocalNode | undefined
  /** the peer id of the host serving a remote node, if known */
  hostOf: (nodeId: string) => Promise<string | undefined>
  /** local node names whose `read` is never reported */
  hideRead: () => readonly string[]
  log: Logger
}

/** A message is reported only to the host it came from, by the node it went to. */
export class ReceiptService {
  readonly store: ReceiptStore
  readonly link: ReceiptLink

  constructor (private readonly host: ReceiptDeps) {
    this.store = new ReceiptStore(host.db, host.committer)
    this.link = new ReceiptLink({ libp2p: host.libp2p, store: this.store, accept: async (peer, body) => await this.accept(peer, body), log: host.log })
  }

  async start (): Promise<void> {
    this.store.on('error-log', (err: unknown) => this.host.log(`receipt histories not stored: ${errorMessage(err)}`))
    this.host.consumption.on('pushed', (nodeId: string, seqs: number[]) => { void this.report(nodeId, seqs, 'pushed') })
    this.host.consumption.on('read', (nodeId: string, seqs: number[]) => { void this.report(nodeId, seqs, 'read') })
    await this.link.start()
  }

  async stop (): Promise<void> {
    await this.link.stop()
  }

  /** The sender-side check of a receipt that came over the mesh from `peer`. */
  private async accept (peer: string, body: ReceiptBody): Promise<string | undefined> {
    const r = await this.store.get(body.p)
    if (r === undefined) return `UNKNOWN_MESSAGE: this host sent no message ${body.p}`
    if (r.off === true) return `NO_RECEIPT: the sender asked for no receipts for ${body.p}`
    if (r.to !== body.n) return `WRONG_NODE: message ${body.p} went to ${r.to}, not ${body.n}`
    if (r.dest !== peer) return `WRONG_HOST: message ${body.p} was handed to ${r.dest}, not ${peer}`
    return undefined
  }

  /** Start a history for a message just sent. */
  sent (p: { id: string, to: string, from: string, dest: string, state: ReceiptState, off: boolean }): void {
    this.store.sent(p)
  }

  /** Delivery outcomes of the sender's own links (no fsync added: unsynced, one batch per acked frame). */
  async delivered (entries: OutboxEntry[]): Promise<void> {
    await this.store.add(entries.map((e) => ({ id: e.packetId, state: 'delivered' as const, at: Date.now() })), false)
  }

  async dead (items: Doomed[]): Promise<void> {
    const at = Date.now()
    await this.store.add(items.map((d) => ({ id: d.entry.packetId, state: d.code === 'TTL_EXPIRED' ? 'dead' as const : 'refused' as const, at, reason: `${d.code}: ${d.reason}` })), false)
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
      for (const seq of seqs) {
        const [entry] = await this.host.inbox.read(nodeId, seq - 1, 1)
        if (entry?.seq !== seq) continue
        const p = decodePacket(entry.packet)
        if (p.from === p.to) continue // a host notice to the node itself
        if (this.host.localNode(p.from) !== undefined) { local.push({ id: p.id, state, at }); continue }
        const dest = await this.host.hostOf(p.from).catch(() => undefined)
        if (dest === undefined) continue
        remote.push({ dest, packetId: p.id, state, bytes: signReceipt(node.key, { v: 1, p: p.id, n: nodeId, s: state, t: at }) })
      }
      await this.store.add(local, true)
      await this.store.queue(remote)
      if (remote.length > 0) this.link.kick()
    } catch (err) {
      this.host.log(`receipts for ${nodeId}: ${errorMessage(err)}`)
    }
  }
}
