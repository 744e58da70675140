import type { Libp2p, PeerId } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Packet } from '../packet/types.js'
import type { Committer, WriteOp } from '../store/db.js'
import type { InboxStore } from '../store/inbox.js'
import type { Doomed, OutboxEntry, OutboxStore } from '../store/outbox.js'
import type { Logger } from '../util/log.js'
import { PeerLink } from './link.js'
import { PACKET_PROTOCOL } from './frame.js'
import type { Notices } from './notices.js'
import { PacketReceiver, type Denial } from './receiver.js'
import { isA2aQueue, type PeerTarget, type QueueResult, type Transport } from './transport.js'
import { ON_LIMITED } from '../util/streams.js'
import { deadLetter, TtlSweep } from './dead-letters.js'
import { mark } from '../util/trace.js'

export type { QueueResult } from './transport.js'

/** The receiving host's admission check, mandatory: a packet from a remote host enters an inbox only when it answers null. */
export interface Admission {
  admit: (packet: Packet, remotePeer: string) => Promise<Denial | null>
  /** admit's decision at once when it needs no wait (undefined: call admit) */
  admitNow?: (packet: Packet, remotePeer: string) => Denial | null | undefined
  /** told about each denied packet (for denied-attempt notices) */
  denied: (packet: Packet, denial: Denial) => void
}

export interface DeliveryComponents {
  libp2p: Libp2p
  committer: Committer
  inbox: InboxStore
  outbox: OutboxStore
  admission: Admission
  notices: Pick<Notices, 'item'>
  /** label of a node id for messages (its name when known) */
  label: (nodeId: string) => string
  log: Logger
  /** delivery outcomes of sent messages, for the sender's receipts: their records ride the batches that settle the entries */
  outcomes?: Outcomes
}

/** The sender's receipt records of settled outbox entries (receipt-service.ts). */
export interface Outcomes {
  /** ops for the batch that removes acked entries */
  deliveredOps: (live: OutboxEntry[]) => WriteOp[]
  /** ops for the dead-letter batch */
  deadOps: (items: Doomed[]) => WriteOp[]
  /** told once their batch is written */
  settled: (entries: OutboxEntry[]) => void
  /** whether deliveredOps reads this entry's packet (it does only for a send it no longer remembers) */
  readsPacket: (entry: OutboxEntry) => boolean
}

/** how often expired outbox entries are looked up (an index seek when there are none) */

/**
 * The libp2p transport: outbound delivery (one PeerLink per destination
 * host), inbound delivery (the packet protocol handler), dead letters and
 * their notices.
 */
export class DeliveryService implements Transport<PeerTarget> {
  private readonly links = new Map<string, PeerLink>()
  private readonly sweeper: TtlSweep
  private readonly receiver: PacketReceiver
  private readonly deps: DeliveryComponents
  private started = false

  constructor (components: DeliveryComponents) {
    this.deps = components
    const { admission } = components
    this.sweeper = new TtlSweep({
      outbox: components.outbox,
      // entries in a frame on the wire wait for its ack or its failure (A2A agents' queues are swept by their transport)
      skip: (e) => isA2aQueue(e.dest) || (this.links.get(e.dest)?.isInflight(e.key) ?? false),
      reason: (e) => `not acknowledged by host ${e.dest} before its TTL ran out`,
      deadLetter: async (items) => await this.deadLetter(items),
      log: components.log,
      name: 'ttl sweep'
    })
    this.receiver = new PacketReceiver({
      inbox: components.inbox,
      admit: admission.admit.bind(admission),
      ...(admission.admitNow === undefined ? {} : { admitNow: admission.admitNow.bind(admission) }),
      onDenied: admission.denied.bind(admission),
      log: components.log
    })
  }

  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    await this.deps.libp2p.handle(PACKET_PROTOCOL, (data) => { void this.receiver.handle(data) }, { maxInboundStreams: 1024, maxOutboundStreams: 1024, ...ON_LIMITED })
    this.deps.libp2p.addEventListener('peer:identify', (evt) => this.onPeer(evt.detail.peerId))
    this.deps.libp2p.addEventListener('peer:connect', (evt) => this.onPeer(evt.detail))
    // the outbox also holds the queues of A2A agents (a2a-transport.ts): those are not peers
    for (const dest of this.deps.outbox.destinations()) if (!isA2aQueue(dest)) this.link(dest).wake()
    this.sweeper.start()
  }

  async stop (): Promise<void> {
    if (!this.started) return
    this.started = false
    this.sweeper.stop()
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
            const outcomes = this.deps.outcomes
            let live: OutboxEntry[] = []
            await this.deps.outbox.remove(entries, outcomes === undefined ? {} : { extra: (l) => { live = l; return outcomes.deliveredOps(l) } })
            if (live.length > 0) outcomes?.settled(live)
          },
          rejected: async (items) => await this.deadLetter(items),
          readsPacket: (e) => this.deps.outcomes?.readsPacket(e) ?? false
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
  enqueue (packet: Packet, bytes: Uint8Array, dest: string, ttl: number, whole?: Uint8Array): Promise<QueueResult> {
    let staged: { ops: WriteOp[], entry: OutboxEntry }
    try {
      staged = this.deps.outbox.stage(dest, packet.id, packet.to, this.deps.label(packet.to), packet.from, Date.now() + ttl, bytes, whole)
    } catch (err) {
      return Promise.reject(err)
    }
    // handed to the Committer in the same tick as stage(): key order = commit order;
    // what waits for the commit holds the entry and the id, not the packet object
    return this.queued(this.deps.committer.write(staged.ops), staged.entry, dest, packet.id)
  }

  /**
   * The entry once its write is durable, handed to the link. Not async: one
   * reaction on the write's promise per send, no suspended frame.
   */
  private queued (write: Promise<void>, entry: OutboxEntry, dest: string, id: string): Promise<QueueResult> {
    return write.then((): QueueResult => {
      mark('outbox.durable')
      // durable: hand the entry to the link in memory (it reads the store after a reconnect)
      this.link(dest).offer([entry])
      return { id, state: 'queued' }
    }, (err: unknown) => {
      this.deps.outbox.release(entry)
      throw err
    })
  }

  /** The transport for targets on remote hosts: queued in the outbox for the target's host. */
  deliver (packet: Packet, bytes: Uint8Array, target: PeerTarget, ttl: number, whole?: Uint8Array): Promise<QueueResult> {
    return this.enqueue(packet, bytes, target.host, ttl, whole)
  }

  /** The outbox value's header goes before the packet: the sender encodes it after as many bytes. */
  room (packet: Packet): number {
    return this.deps.outbox.headRoom(packet.id, packet.to, packet.from)
  }

  private async deadLetter (items: Doomed[]): Promise<void> {
    const outcomes = this.deps.outcomes
    await deadLetter(this.deps, items, outcomes === undefined ? undefined : (killed) => outcomes.deadOps(killed), (killed) => outcomes?.settled(killed.map((d) => d.entry)))
  }
}
