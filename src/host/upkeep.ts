// Host-wide upkeep that belongs to no one service: the retention pass over
// the stores, and the reactions to libp2p peer events (dial what discovery
// found, exchange cards once a peer is identified).
import type { IdentifyResult, Libp2p, PeerInfo } from '@libp2p/interface'
import type { CardExchange } from '../discovery/cards-protocol.js'
import type { InboxStore } from '../store/inbox.js'
import type { NodeStore } from '../store/nodes.js'
import type { OutboxStore } from '../store/outbox.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { MINUTE } from '../util/time.js'
import type { HostConfig } from './config.js'

const RETENTION_INTERVAL = MINUTE

export interface RetentionComponents {
  nodes: Pick<NodeStore, 'list'>
  inbox: Pick<InboxStore, 'prune' | 'pruneDedup'>
  outbox: Pick<OutboxStore, 'pruneDead'>
  config: Pick<HostConfig, 'retentionAge' | 'retentionKeep' | 'deadRetention'>
  log: Logger
}

/**
 * Retention pass (at start, then every RETENTION_INTERVAL): acked inbox
 * entries past retention_age_ms / retention_keep, message ids older than
 * the dedup window, dead letters older than dead_retention_ms.
 */
export class Retention {
  private timer?: NodeJS.Timeout
  private running = false
  private stopped = false

  constructor (private readonly components: RetentionComponents) {}

  start (): void {
    if (this.timer !== undefined) return
    this.stopped = false
    this.timer = setInterval(() => { void this.pass() }, RETENTION_INTERVAL)
    this.timer.unref()
    setImmediate(() => { void this.pass() })
  }

  stop (): void {
    this.stopped = true
    clearInterval(this.timer)
    this.timer = undefined
  }

  private async pass (): Promise<void> {
    if (this.running || this.stopped) return
    this.running = true
    const { nodes, inbox, outbox, config, log } = this.components
    try {
      const now = Date.now()
      let pruned = 0
      for (const node of nodes.list()) pruned += await inbox.prune(node.record.id, now - config.retentionAge, config.retentionKeep)
      const dedup = await inbox.pruneDedup(now)
      const dead = await outbox.pruneDead(now - config.deadRetention)
      log(`retention pass: pruned ${pruned} inbox entries, ${dedup} message ids, ${dead} dead letters`)
    } catch (err) {
      log(`retention: ${errorMessage(err)}`)
    } finally {
      this.running = false
    }
  }
}

export interface PeerEventsComponents {
  libp2p: Libp2p
  exchange: Pick<CardExchange, 'exchangeWithRetry'>
  log: Logger
}

/** A discovered peer is dialled (unless connected); an identified one gets a card exchange. */
export class PeerEvents {
  private started = false
  private readonly onDiscovery = (evt: CustomEvent<PeerInfo>): void => {
    const { libp2p, log } = this.components
    const { id, multiaddrs } = evt.detail
    if (libp2p.getConnections(id).length > 0) return
    const addrs = multiaddrs.length > 0 ? multiaddrs : undefined
    void libp2p.dial(addrs ?? id).catch((err) => log(`dial ${id.toString()} failed: ${errorMessage(err)}`))
  }

  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    const peer = evt.detail.peerId
    void this.components.exchange.exchangeWithRetry(peer).catch((err) => this.components.log(`cards with ${peer.toString()}: ${errorMessage(err)}`))
  }

  constructor (private readonly components: PeerEventsComponents) {}

  start (): void {
    if (this.started) return
    this.started = true
    this.components.libp2p.addEventListener('peer:discovery', this.onDiscovery)
    this.components.libp2p.addEventListener('peer:identify', this.onIdentify)
  }

  stop (): void {
    if (!this.started) return
    this.started = false
    this.components.libp2p.removeEventListener('peer:discovery', this.onDiscovery)
    this.components.libp2p.removeEventListener('peer:identify', this.onIdentify)
  }
}
