import type { Libp2p, PeerId } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { encodePacket } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import type { Committer } from '../store/db.js'
import type { AppendItem, InboxStore } from '../store/inbox.js'
import type { Doomed, OutboxEntry, OutboxStore } from '../store/outbox.js'
import type { LocalNode } from '../store/nodes.js'
import { ulid } from '../util/ulid.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { PeerLink } from './link.js'
import { PACKET_PROTOCOL } from './frame.js'
import { PacketReceiver, type Admit, type Denial } from './receiver.js'

export interface DeliveryDeps {
  libp2p: Libp2p
  committer: Committer
  inbox: InboxStore
  outbox: OutboxStore
  admit: Admit
  onDenied?: (packet: Packet, denial: Denial) => void
  /** label of a node id for messages (its name when known) */
  label: (nodeId: string) => string
  log: Logger
  /** delivery outcomes of sent messages, for the sender's receipts (after they are stored) */
  outcomes?: { delivered: (entries: OutboxEntry[]) => Promise<void>, dead: (items: Doomed[]) => Promise<void> }
}

export interface QueueResult { id: string, state: 'queued' | 'delivered', seq?: number }

/** how often expired outbox entries are looked up (an index seek when there are none) */
const SWEEP_INTERVAL = 1 * SECOND
const SWEEP_BATCH = 1000

/**
 * Outbound delivery (one PeerLink per destination host), inbound delivery (the
 * packet protocol handler), local delivery, dead letters and their notices.
 */
export class DeliveryService {
  private readonly links = new Map<string, PeerLink>()
  private sweeper?: NodeJS.Timeout
  private readonly receiver: PacketReceiver

  constructor (private readonly deps: DeliveryDeps) {
    this.receiver = new PacketReceiver({ inbox: deps.inbox, admit: deps.admit, onDenied: deps.onDenied, log: deps.log })
  }

  async start (): Promise<void> {
    await this.deps.libp2p.handle(PACKET_PROTOCOL, (data) => { void this.receiver.handle(data) }, { maxInboundStreams: 1024, maxOutboundStreams: 1024 })
    this.deps.libp2p.addEventListener('peer:identify', (evt) => this.onPeer(evt.detail.peerId))
    this.deps.libp2p.addEventListener('peer:connect', (evt) => this.onPeer(evt.detail))
    for (const dest of this.deps.outbox.destinations()) this.link(dest).wake()
    this.sweeper = setInterval(() => { void this.sweep() }, SWEEP_INTERVAL)
    this.sweeper.unref()
  }

  async stop (): Promise<void> {
    clearInterval(this.sweeper)
    for (const link of this.links.values()) link.stop()
    this.links.clear()
    await this.deps.libp2p.unhandle(PACKET_PROTOCOL).catch(() => {})
  }

  private onPeer (peer: PeerId): void {
    const key = peer.toString()
    if (this.deps.outbox.depthOf(key) > 0) this.link(key).wake(true)
  }

  private link (dest: string): PeerLink {
    let link = this.links.get(dest)
    if (link === undefined) {
      link = new PeerLink(peerIdFromString(dest), {
        libp2p: this.deps.libp2p,
        outbox: this.deps.outbox,
        log: this.deps.log,
        events: {
          delivered: async (entries) => {
            await this.deps.outbox.remove(entries)
            await this.deps.outcomes?.delivered(entries)
          },
          rejected: async (items) => await this.deadLetter(items)
        }
      })
      this.links.set(dest, link)
    }
    return link
  }

  linkStates (): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [dest, link] of this.links) out[dest] = link.status
    return out
  }

  /** Queue an encoded packet for a remote host; resolves once it is durable. */
  async enqueue (packet: Packet, bytes: Uint8Array, dest: string, ttl: number): Promise<QueueResult> {
    const { ops, entry } = this.deps.outbox.stage(dest, packet.id, packet.to, this.deps.label(packet.to), packet.from, Date.now() + ttl, bytes)
    try {
      // handed to the Committer in the same tick as stage(): key order = commit order
      await this.deps.committer.write(ops)
    } catch (err) {
      this.deps.outbox.release(dest)
      throw err
    }
    // durable: hand the entry to the link in memory (it reads the store after a reconnect)
    this.link(dest).offer([entry])
    return { id: packet.id, state: 'queued' }
  }

  /** Deliver to a node on this host: durable in its inbox before this resolves. */
  async deliverLocal (packet: Packet, bytes: Uint8Array): Promise<QueueResult> {
    const [r] = await this.deps.inbox.append([{ nodeId: packet.to, packetId: packet.id, packet: bytes }])
    if ('error' in r) throw r.error
    return { id: packet.id, state: 'delivered', seq: r.seq }
  }

  /**
   * Dead letters: the outbox entries move to `x!` and each sender node gets an
   * ERROR notice in its own inbox, in the same synced batch (a crash cannot
   * leave one without the other).
   */
  private async deadLetter (items: Doomed[]): Promise<void> {
    if (items.length === 0) return
    await this.deps.outbox.kill(items, async (ops, killed) => {
      const notices = killed.map(({ entry, code, reason }) => this.noticeItem(entry.from, `message ${entry.packetId} to ${this.deps.label(entry.to)} was not delivered: ${code}: ${reason}`, entry.packetId))
      const results = await this.deps.inbox.append(notices, { extra: ops })
      results.forEach((r, k) => {
        const { entry, code, reason } = killed[k]
        this.deps.log(`dead letter ${entry.packetId} to ${entry.to}: ${code} ${reason}`)
        if ('error' in r) this.deps.log(`notice to ${entry.from} failed: ${r.error.message}`)
      })
      await this.deps.outcomes?.dead(killed)
    })
  }

  private noticeItem (nodeId: string, context: string, inReplyTo?: string): AppendItem {
    const packet: Packet = { id: ulid(), from: nodeId, to: nodeId, signal: 'ERROR', scope: { files: [], zone: 'project' }, payload: { context }, ts: Date.now() }
    if (inReplyTo !== undefined) packet.in_reply_to = inReplyTo
    return { nodeId, packetId: packet.id, packet: encodePacket(packet) }
  }

  /** An ERROR notice from a node to itself, in its own inbox. */
  async notice (nodeId: string, context: string, inReplyTo?: string): Promise<void> {
    const [r] = await this.deps.inbox.append([this.noticeItem(nodeId, context, inReplyTo)])
    if ('error' in r) this.deps.log(`notice to ${nodeId} failed: ${r.error.message}`)
  }

  /** Expired outbox entries become dead letters, and their senders are told. */
  async sweep (now = Date.now()): Promise<number> {
    if (this.sweeping) return 0
    this.sweeping = true
    let total = 0
    try {
      // entries in a frame on the wire wait for its ack or its failure
      const busy = (e: OutboxEntry): boolean => this.links.get(e.dest)?.isInflight(e.key) ?? false
      for (;;) {
        const expired = await this.deps.outbox.expired(now, SWEEP_BATCH, busy)
        await this.deadLetter(expired.map((entry) => ({ entry, code: 'TTL_EXPIRED', reason: `not acknowledged by host ${entry.dest} before its TTL ran out` })))
        total += expired.length
        if (expired.length < SWEEP_BATCH) return total
      }
    } catch (err) {
      this.deps.log(`ttl sweep: ${errorMessage(err)}`)
      return total
    } finally {
      this.sweeping = false
    }
  }

  private sweeping = false

  isLocalSender (node: LocalNode | undefined): boolean { return node !== undefined }
}
