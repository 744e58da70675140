// The discovery engine of one host: publishes each local node's signed card
// and name claim in the DHT (at start, when a node appears, when the first
// DHT peers arrive or multiply, and periodically), gossips card updates, forgets expired
// cards, feeds card addresses to the peer store, and resolves names and node
// ids through the DHT for hosts that are not connected.

import { peerIdFromString } from '@libp2p/peer-id'
import type { IdentifyResult, Libp2p } from '@libp2p/interface'
import type { SingleKadDHT } from '@libp2p/kad-dht'
import type { LocalCards } from './local-cards.js'
import { DHT_PROTOCOL } from '../host/libp2p.js'
import { isNodeId } from '../identity/node-key.js'
import type { LocalNode, NodeStore } from '../store/nodes.js'
import type { Logger } from '../util/log.js'
import { MINUTE, SECOND } from '../util/time.js'
import { NameCollisionError, errorMessage } from '../util/errors.js'
import { dialableFrom, withoutPeerId } from './addrs.js'
import type { VerifiedCard } from './card.js'
import { DhtRecords } from './dht-records.js'
import { CardGossip } from './gossip.js'
import { NODE_NAME_PATTERN } from './card.js'
import type { Directory } from './directory.js'

/** What discovery uses of its host. */
export interface DiscoveryComponents { libp2p: Libp2p, directory: Directory, log: Logger, cards: LocalCards, nodes: NodeStore }

const LOOKUP_RETRY_DELAY = 500

/** Republish every local card and claim this often (records live CARD_LIFETIME). */
export const REPUBLISH_INTERVAL = 15 * MINUTE
/** Expired remote cards are forgotten this often. */
export const PRUNE_INTERVAL = MINUTE
/** Wait this long after a DHT peer appears before publishing, to batch a burst of connections. */
export const PUBLISH_SETTLE = SECOND
/** At most one peer-triggered publish per this interval. */
export const PUBLISH_SPACING = 10 * SECOND

export interface DiscoveryOptions {
  /** gossip card updates (default true; tests turn it off to prove the DHT path) */
  gossip?: boolean
  /** ms; default REPUBLISH_INTERVAL */
  republishInterval?: number
  /** ms; default PRUNE_INTERVAL */
  pruneInterval?: number
  /** ms; default PUBLISH_SETTLE */
  settle?: number
}

export class Discovery {
  readonly records: DhtRecords
  private readonly gossip?: CardGossip
  private readonly timers: NodeJS.Timeout[] = []
  private pending?: NodeJS.Timeout
  private publishing?: Promise<void>
  private again = false
  private lastPublish = 0
  private stopped = false
  /** DHT routing table size when the last publish started */
  private tableAtPublish = 0
  /** a publish of some local node failed (it is tried again when the next DHT peer appears) */
  private publishFailed = false
  private gossipPending?: NodeJS.Timeout
  private lastGossip = 0
  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    if (!evt.detail.protocols.includes(DHT_PROTOCOL)) return
    if (this.peerPublishDue()) this.schedule(Math.max(this.settle, this.lastPublish + PUBLISH_SPACING - Date.now()))
    else this.scheduleGossip()
  }

  private readonly onCard = (vc: VerifiedCard): void => { void this.learnAddrs(vc) }
  private readonly settle: number
  /** target -> the DHT lookup running for it: concurrent lookups of one target share it */
  private readonly lookups = new Map<string, Promise<boolean>>()
  /** DHT lookups this host ran (joined ones not counted), for diagnostics and tests */
  lookupsRun = 0

  constructor (private readonly host: DiscoveryComponents, private readonly opts: DiscoveryOptions = {}) {
    this.records = new DhtRecords(host.libp2p)
    if (opts.gossip !== false) this.gossip = new CardGossip(host.libp2p, host.directory, host.log)
    this.settle = opts.settle ?? PUBLISH_SETTLE
  }

  async start (): Promise<void> {
    this.gossip?.start()
    this.host.directory.on('card', this.onCard)
    this.host.libp2p.addEventListener('peer:identify', this.onIdentify)
    this.host.libp2p.addEventListener('stop', () => this.stop(), { once: true })
    await this.host.directory.prune().catch(() => 0)
    for (const vc of this.host.directory.list()) await this.learnAddrs(vc)
    this.every(this.opts.republishInterval ?? REPUBLISH_INTERVAL, () => this.schedule(0))
    this.every(this.opts.pruneInterval ?? PRUNE_INTERVAL, () => { void this.host.directory.prune().catch(() => 0) })
    this.schedule(0)
  }

  stop (): void {
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    clearTimeout(this.pending)
    clearTimeout(this.gossipPending)
    this.gossip?.stop()
    this.host.directory.off('card', this.onCard)
    this.host.libp2p.removeEventListener('peer:identify', this.onIdentify)
  }

  private routingTableSize (): number {
    return (this.host.libp2p as Libp2p<{ dht: SingleKadDHT }>).services.dht.routingTable.size
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
   * A peer arrived but no DHT publish is due: gossip the local cards again
   * (cheap: one message each through the gossip mesh, which the new peer may
   * have just joined), coalesced and at most every PUBLISH_SPACING.
   */
  private scheduleGossip (): void {
    if (this.gossip === undefined || this.gossipPending !== undefined || this.stopped) return
    this.gossipPending = setTimeout(() => {
      this.gossipPending = undefined
      if (this.stopped || this.host.libp2p.status !== 'started') return
      this.lastGossip = Date.now()
      for (const node of this.host.nodes.list()) void this.gossip?.publish(this.host.cards.cardOf(node))
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
          this.publishFailed = false
          await Promise.all(this.host.nodes.list().map(async (n) => await this.publishNode(n)))
        } while (this.again && !this.stopped)
      } finally {
        this.publishing = undefined
      }
    })()
    await this.publishing
  }

  private async publishNode (node: LocalNode): Promise<void> {
    if (this.stopped || this.host.libp2p.status !== 'started') return
    const card = this.host.cards.cardOf(node)
    const claim = this.host.cards.claimOf(node)
    await this.gossip?.publish(card)
    try {
      await this.records.putCard(card, node.record.id)
      await this.records.putClaim(claim)
    } catch (err) {
      this.publishFailed = true
      this.host.log(`discovery: publishing ${node.record.name} failed: ${errorMessage(err)}`)
    }
  }

  /** Teach the peer store the addresses a remote card names (without loopback ones when they cannot reach it). */
  private async learnAddrs (vc: VerifiedCard): Promise<void> {
    try {
      const addrs = dialableFrom(this.host.libp2p.getMultiaddrs(), vc.hostAddrs).map(withoutPeerId)
      if (addrs.length === 0 || vc.hostPeerId === this.host.libp2p.peerId.toString()) return
      await this.host.libp2p.peerStore.merge(peerIdFromString(vc.hostPeerId), { multiaddrs: addrs })
    } catch (err) {
      this.host.log(`discovery: addresses of ${vc.hostPeerId}: ${errorMessage(err)}`)
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
    for (const vc of cards) await this.host.directory.learn(vc.card).catch(() => undefined)
    return cards
  }

  /**
   * `host.lookup`: true when the DHT knew the target; a name claimed by
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
    const local = this.host.libp2p.peerId.toString()
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
