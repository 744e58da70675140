// The discovery engine of one host: publishes each local node's signed card
// and name claim in the DHT (at start, when a node appears, when the first
// DHT peers arrive or multiply, and periodically), gossips card updates, forgets expired
// cards, feeds card addresses to the peer store, and resolves names and node
// ids through the DHT for hosts that are not connected.

import { peerIdFromString } from '@libp2p/peer-id'
import type { IdentifyResult, Libp2p } from '@libp2p/interface'
import type { SingleKadDHT } from '@libp2p/kad-dht'
import { isNodeId } from '../identity/node-key.js'
import type { LocalNode } from '../store/nodes.js'
import { MINUTE, SECOND } from '../util/time.js'
import { NameCollisionError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { dialableFrom, withoutPeerId } from './addrs.js'
import type { SignedAgentCard, VerifiedCard } from './card.js'
import { DHT_PROTOCOL, DhtRecords } from './dht-records.js'
import type { Directory } from './directory.js'
import { CardGossip } from './gossip.js'
import { NODE_NAME_PATTERN } from './card.js'
import type { SignedNameClaim } from './records.js'
import { TableFiller, type TableFillerOptions } from './table-filler.js'

const LOOKUP_RETRY_DELAY = 500

/** Republish every local card and claim this often (records live CARD_LIFETIME). */
export const REPUBLISH_INTERVAL = 15 * MINUTE
/** Expired remote cards are forgotten this often. */
export const PRUNE_INTERVAL = MINUTE
/** Wait this long after a DHT peer appears before publishing, to batch a burst of connections. */
export const PUBLISH_SETTLE = SECOND
/** At most one peer-triggered publish per this interval. */
export const PUBLISH_SPACING = 10 * SECOND

/** The signed card and name claim of a local node (the host's local cards). */
export interface LocalCardSigner {
  cardOf: (node: LocalNode) => SignedAgentCard
  claimOf: (node: LocalNode) => SignedNameClaim
}

/** What the discovery engine uses of its host. */
export interface DiscoveryEngineComponents {
  libp2p: Libp2p
  /** remote cards known here: learnt into, pruned, read for addresses */
  directory: Directory
  /** this host's nodes, whose cards are published */
  nodes: { list: () => LocalNode[] }
  cards: LocalCardSigner
  log: Logger
}

export interface DiscoveryOptions {
  /** gossip card updates (default true; tests turn it off to prove the DHT path) */
  gossip?: boolean
  /** ms; default REPUBLISH_INTERVAL */
  republishInterval?: number
  /** ms; default PRUNE_INTERVAL */
  pruneInterval?: number
  /** ms; default PUBLISH_SETTLE */
  settle?: number
  /** the thin routing table's self-queries (table-filler.ts): their spacing and first delay */
  tableFill?: TableFillerOptions
}

export class Discovery {
  readonly records: DhtRecords
  /** asks for the host's closest peers again while its routing table is thin */
  readonly filler: TableFiller
  private readonly gossip?: CardGossip
  private readonly timers: NodeJS.Timeout[] = []
  private pending?: NodeJS.Timeout
  private publishing?: Promise<void>
  private again = false
  private lastPublish = 0
  private stopped = false
  /** DHT routing table size when the last publish started */
  private tableAtPublish = 0
  /** DHT routing table size when the local cards were last gossiped (by a publish or a peer's arrival) */
  private tableAtGossip = 0
  /** a publish of some local node failed (it is tried again when the next DHT peer appears) */
  private publishFailed = false
  private gossipPending?: NodeJS.Timeout
  private lastGossip = 0
  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    if (!evt.detail.protocols.includes(DHT_PROTOCOL)) return
    this.filler.peerArrived()
    if (this.peerPublishDue()) this.schedule(Math.max(this.settle, this.lastPublish + PUBLISH_SPACING - Date.now()))
    else if (this.peerGossipDue()) this.scheduleGossip()
  }

  private readonly onCard = (vc: VerifiedCard): void => { void this.learnAddrs(vc) }
  private readonly settle: number
  /** target -> the DHT lookup running for it: concurrent lookups of one target share it */
  private readonly lookups = new Map<string, Promise<boolean>>()
  /** DHT lookups this host ran (joined ones not counted), for diagnostics and tests */
  lookupsRun = 0

  private started = false

  constructor (private readonly components: DiscoveryEngineComponents, private readonly opts: DiscoveryOptions = {}) {
    this.records = new DhtRecords(components.libp2p)
    this.filler = new TableFiller(components.libp2p, components.log, opts.tableFill)
    if (opts.gossip !== false) this.gossip = new CardGossip(components.libp2p, components.directory, components.log)
    this.settle = opts.settle ?? PUBLISH_SETTLE
  }

  private get libp2p (): Libp2p { return this.components.libp2p }
  private get directory (): Directory { return this.components.directory }

  /** Subscribe, listen for DHT peers, start the timers and publish; a second call does nothing. */
  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    this.stopped = false
    this.gossip?.start()
    this.filler.start()
    this.directory.on('card', this.onCard)
    this.libp2p.addEventListener('peer:identify', this.onIdentify)
    await this.directory.prune().catch(() => 0)
    for (const vc of this.directory.list()) await this.learnAddrs(vc)
    this.every(this.opts.republishInterval ?? REPUBLISH_INTERVAL, () => this.schedule(0))
    this.every(this.opts.pruneInterval ?? PRUNE_INTERVAL, () => { void this.directory.prune().catch(() => 0) })
    this.schedule(0)
  }

  /** Timers, listeners and the gossip subscription end; a second call does nothing. */
  stop (): void {
    if (!this.started) return
    this.started = false
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    this.timers.length = 0
    clearTimeout(this.pending)
    clearTimeout(this.gossipPending)
    this.filler.stop()
    this.gossip?.stop()
    this.directory.off('card', this.onCard)
    this.libp2p.removeEventListener('peer:identify', this.onIdentify)
  }

  private routingTableSize (): number {
    return (this.libp2p as Libp2p<{ dht: SingleKadDHT }>).services.dht.routingTable.size
  }

  /**
   * Whether a DHT peer's arrival should trigger a publish: when the last
   * publish failed, found no DHT peer, or the routing table has at least
   * doubled since it started (the first peers of a lone host, a mesh growing
   * around it).
   * In a formed mesh every connection a lookup opens is a DHT peer's arrival:
   * republishing to the DHT on each (every PUBLISH_SPACING, on every host)
   * kept idle meshes busy; the cards are gossiped again instead, and the
   * periodic republish covers the DHT.
   */
  private peerPublishDue (): boolean {
    return this.publishFailed || this.tableAtPublish === 0 || this.routingTableSize() >= 2 * this.tableAtPublish
  }

  /**
   * Whether a DHT peer's arrival should gossip the local cards again: when
   * the routing table has at least doubled since they were last gossiped (the
   * gossip mesh grew around this host). A re-connection to a peer already
   * known, which a loaded mesh makes often (libp2p's connection monitor drops
   * a connection whose ping is late, and it is dialled again), is not
   * growth: gossiping on each of those sent every card to every host about
   * every 10 s per host (at 30 simulated hosts, 1,850 card messages in 30 s
   * of an idle mesh, each verified by every host). The new peer gets the
   * cards anyway: card exchange runs on every new connection.
   */
  private peerGossipDue (): boolean {
    return this.routingTableSize() >= 2 * this.tableAtGossip
  }

  /**
   * A peer arrived but no DHT publish is due: gossip the local cards again
   * (cheap: one message each through the gossip mesh, which the new peer may
   * have just joined), coalesced and at most every PUBLISH_SPACING.
   */
  private scheduleGossip (): void {
    if (this.gossip === undefined || this.gossipPending !== undefined || this.stopped) return
    this.gossipPending = setTimeout(() => {
      this.gossipPending = undefined
      if (this.stopped || this.libp2p.status !== 'started') return
      this.lastGossip = Date.now()
      this.tableAtGossip = this.routingTableSize()
      for (const node of this.components.nodes.list()) void this.gossip?.publish(this.components.cards.cardOf(node))
    }, Math.max(this.settle, this.lastGossip + PUBLISH_SPACING - Date.now()))
    this.gossipPending.unref()
  }

  private every (ms: number, fn: () => void): void {
    const t = setInterval(fn, ms)
    t.unref()
    this.timers.push(t)
  }

  /** A local node appeared or changed: publish now. */
  announce (): void {
    this.schedule(0)
  }

  /** Publish every local node's card and claim after `delay` ms (coalesced). */
  schedule (delay: number): void {
    if (this.stopped) return
    if (this.publishing !== undefined) { this.again = true; return }
    if (this.pending !== undefined) {
      if (delay > 0) return
      clearTimeout(this.pending)
    }
    this.pending = setTimeout(() => {
      this.pending = undefined
      void this.publishAll()
    }, Math.max(0, delay))
    this.pending.unref()
  }

  /** Publish now; resolves when every local node's card and claim went out. */
  async publishAll (): Promise<void> {
    if (this.publishing !== undefined) { this.again = true; await this.publishing; return }
    this.publishing = (async () => {
      try {
        do {
          this.again = false
          this.lastPublish = Date.now()
          this.lastGossip = this.lastPublish
          this.tableAtPublish = this.routingTableSize()
          this.tableAtGossip = this.tableAtPublish
          this.publishFailed = false
          await Promise.all(this.components.nodes.list().map(async (n) => await this.publishNode(n)))
        } while (this.again && !this.stopped)
      } finally {
        this.publishing = undefined
      }
    })()
    await this.publishing
  }

  private async publishNode (node: LocalNode): Promise<void> {
    if (this.stopped || this.libp2p.status !== 'started') return
    const card = this.components.cards.cardOf(node)
    const claim = this.components.cards.claimOf(node)
    await this.gossip?.publish(card)
    try {
      await this.records.putCard(card, node.record.id)
      await this.records.putClaim(claim)
    } catch (err) {
      this.publishFailed = true
      this.components.log(`discovery: publishing ${node.record.name} failed: ${errorMessage(err)}`)
    }
  }

  /** Teach the peer store the addresses a remote card names (without loopback ones when they cannot reach it). */
  private async learnAddrs (vc: VerifiedCard): Promise<void> {
    try {
      const addrs = dialableFrom(this.libp2p.getMultiaddrs(), vc.hostAddrs).map(withoutPeerId)
      if (addrs.length === 0 || vc.hostPeerId === this.libp2p.peerId.toString()) return
      await this.libp2p.peerStore.merge(peerIdFromString(vc.hostPeerId), { multiaddrs: addrs })
    } catch (err) {
      this.components.log(`discovery: addresses of ${vc.hostPeerId}: ${errorMessage(err)}`)
    }
  }

  /**
   * Resolve a node name or node id through the DHT only (no cache, no
   * connected peers): the valid, unexpired cards found, each learnt into the
   * directory. A name claimed by several nodes yields several cards.
   */
  async resolve (target: string): Promise<VerifiedCard[]> {
    const ids = isNodeId(target)
      ? [target]
      : NODE_NAME_PATTERN.test(target) ? (await this.records.findName(target)).nodeIds : []
    const found = await Promise.all(ids.map(async (id) => await this.records.findCard(id)))
    const cards = found.filter((vc): vc is VerifiedCard => vc !== undefined && (isNodeId(target) || vc.name === target))
    for (const vc of cards) await this.directory.learn(vc.card).catch(() => undefined)
    return cards
  }

  /**
   * The DHT step of resolution: true when the DHT knew the target; a name claimed by
   * several remote nodes is an error naming them. Concurrent lookups of one
   * target share one DHT lookup.
   */
  async lookup (target: string): Promise<boolean> {
    let running = this.lookups.get(target)
    if (running === undefined) {
      const run = this.lookupOnce(target).finally(() => { if (this.lookups.get(target) === run) this.lookups.delete(target) })
      this.lookups.set(target, run)
      running = run
    }
    return await running
  }

  private async lookupOnce (target: string): Promise<boolean> {
    this.lookupsRun++
    const local = this.libp2p.peerId.toString()
    let cards = (await this.resolve(target)).filter((vc) => vc.hostPeerId !== local)
    if (cards.length === 0) {
      // a lookup right after a node appeared, or on a loaded mesh, can miss: ask once more
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_RETRY_DELAY))
      cards = (await this.resolve(target)).filter((vc) => vc.hostPeerId !== local)
    }
    const ids = [...new Set(cards.map((vc) => vc.nodeId))]
    if (ids.length > 1) {
      throw new NameCollisionError(`name "${target}" is claimed by several nodes: ${ids.join(' and ')}; send by node id instead`)
    }
    return ids.length === 1
  }
}
