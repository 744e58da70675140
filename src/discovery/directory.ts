import { EventEmitter } from 'node:events'
import { CardRecords } from '../store/cards.js'
import type { Committer, RawDb } from '../store/db.js'
import { NameCollisionError } from '../util/errors.js'
import { isExpired, verifyCard, type VerifiedCard } from './card.js'
import { CardNotFromPeerError, CardQuota } from './card-quota.js'

const MAX_REMOTE_CARDS = 100_000

/**
 * Cards of nodes served by other hosts, verified, newest per node id, kept in
 * the store so channel binding and resolution survive a restart.
 * Emits 'card' (VerifiedCard) when a new or newer card is learnt.
 */
export class Directory extends EventEmitter {
  private readonly byId = new Map<string, VerifiedCard>()
  private readonly byName = new Map<string, Set<string>>()
  private readonly records: CardRecords
  /** cards per serving host, so one host's flood leaves room for every other host (card-quota.ts) */
  readonly quota: CardQuota

  constructor (db: RawDb, committer: Committer, private readonly localPeer: string, perHost?: number) {
    super()
    this.records = new CardRecords(db, committer)
    this.quota = new CardQuota(perHost)
    this.setMaxListeners(0)
  }

  async load (): Promise<void> {
    for await (const card of this.records.all()) {
      try {
        this.remember(verifyCard(card))
      } catch {
        // a card that no longer verifies is simply forgotten
      }
    }
  }

  private remember (vc: VerifiedCard): void {
    const prior = this.byId.get(vc.nodeId)
    if (prior !== undefined && prior.name !== vc.name) this.byName.get(prior.name)?.delete(vc.nodeId)
    if (prior !== undefined) this.quota.remove(prior.hostPeerId)
    this.quota.add(vc.hostPeerId)
    this.byId.set(vc.nodeId, vc)
    let ids = this.byName.get(vc.name)
    if (ids === undefined) { ids = new Set(); this.byName.set(vc.name, ids) }
    ids.add(vc.nodeId)
  }

  /**
   * Learn a card (untrusted input): verified, kept if newer. Returns it when it changed anything.
   * `from` is the peer that told it over a direct exchange: it must be the card's serving host.
   * Throws CardQuotaError when the serving host is over its quota.
   */
  async learn (card: unknown, from?: string): Promise<VerifiedCard | undefined> {
    const vc = verifyCard(card)
    if (from !== undefined && vc.hostPeerId !== from) throw new CardNotFromPeerError(`card of ${vc.nodeId} names host ${vc.hostPeerId}, but peer ${from} told it`)
    if (vc.hostPeerId === this.localPeer || isExpired(vc)) return undefined
    const prior = this.byId.get(vc.nodeId)
    if (prior !== undefined && prior.issuedAt >= vc.issuedAt) return undefined
    if (prior === undefined && this.byId.size >= MAX_REMOTE_CARDS) return undefined
    if (prior?.hostPeerId !== vc.hostPeerId) this.quota.check(vc.hostPeerId)
    this.remember(vc)
    await this.records.put(vc.nodeId, vc.card)
    this.emit('card', vc)
    return vc
  }

  /** Forget cards whose validity ended (their host stopped republishing them). Returns how many. */
  async prune (now: number = Date.now()): Promise<number> {
    const gone = [...this.byId.values()].filter((vc) => isExpired(vc, now))
    for (const vc of gone) {
      this.byId.delete(vc.nodeId)
      this.quota.remove(vc.hostPeerId)
      this.byName.get(vc.name)?.delete(vc.nodeId)
      if (this.byName.get(vc.name)?.size === 0) this.byName.delete(vc.name)
    }
    await this.records.delete(gone.map((vc) => vc.nodeId))
    return gone.length
  }

  get (nodeId: string): VerifiedCard | undefined {
    return this.byId.get(nodeId)
  }

  /** The one remote node with this name; a collision is an error naming both ids. */
  byNameUnique (name: string): VerifiedCard | undefined {
    const ids = [...(this.byName.get(name) ?? [])]
    if (ids.length > 1) {
      throw new NameCollisionError(`name "${name}" is claimed by several nodes: ${ids.join(' and ')}; send by node id instead`)
    }
    return ids.length === 1 ? this.byId.get(ids[0]) : undefined
  }

  list (): VerifiedCard[] {
    return [...this.byId.values()]
  }

  hostOf (nodeId: string): string | undefined {
    return this.byId.get(nodeId)?.hostPeerId
  }
}
