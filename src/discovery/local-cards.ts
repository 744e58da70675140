import type { Libp2p } from '@libp2p/interface'
import { buildCard, signCard, type SignedAgentCard } from './card.js'
import { signNameClaim, type SignedNameClaim } from './records.js'
import type { LocalNode } from '../store/nodes.js'
import { HOUR } from '../util/time.js'

/** How long a card and its name claim stay valid: a stopped host's nodes disappear after this. */
export const CARD_LIFETIME = 3 * HOUR
/** Cards are re-signed (new issuedAt, new expiry) once they are this old. */
export const CARD_REFRESH = HOUR

export interface LocalCardsOptions {
  /** validity of a card and its name claim, ms; default CARD_LIFETIME */
  lifetime?: number
  /** re-sign once a card is this old, ms; default CARD_REFRESH */
  refresh?: number
}

interface Cached { card: SignedAgentCard, claim: SignedNameClaim, addrs: string, issuedAt: number }

/**
 * Signed AgentCards and name claims of this host's nodes, re-signed when the
 * host's announced addresses change or they age. The addresses are the
 * announced ones (loopback left out when the host has other addresses).
 */
export class LocalCards {
  private readonly cache = new Map<string, Cached>()
  /** stopped managed nodes: their last, short-lived card */
  private readonly withdrawn = new Map<string, Cached>()
  /** a restored node's next card must be newer than its withdrawal card */
  private readonly floor = new Map<string, number>()
  private readonly lifetime: number
  private readonly refresh: number
  /** the A2A face's base URL once it listens (cards then carry its interfaces) */
  private a2aBaseUrl: string | undefined

  constructor (private readonly libp2p: Libp2p, opts: LocalCardsOptions = {}) {
    this.lifetime = opts.lifetime ?? CARD_LIFETIME
    this.refresh = Math.min(opts.refresh ?? CARD_REFRESH, this.lifetime / 2)
  }

  /** The A2A face listens (or stopped: undefined): cards are re-signed with (without) its interfaces. */
  setA2aBaseUrl (url: string | undefined): void {
    if (url === this.a2aBaseUrl) return
    this.a2aBaseUrl = url
    for (const id of [...this.cache.keys()]) this.invalidate(id)
  }

  private addrs (): string[] {
    return this.libp2p.getMultiaddrs().map((a) => a.toString())
  }

  private current (node: LocalNode, now: number): Cached {
    const gone = this.withdrawn.get(node.record.id)
    if (gone !== undefined) return gone
    const addrs = this.addrs()
    const key = addrs.join(' ')
    const hit = this.cache.get(node.record.id)
    if (hit !== undefined && hit.addrs === key && now - hit.issuedAt < this.refresh) return hit
    const issuedAt = Math.max(now, (hit?.issuedAt ?? this.floor.get(node.record.id) ?? 0) + 1)
    const fresh = this.sign(node, addrs, issuedAt, issuedAt + this.lifetime)
    this.cache.set(node.record.id, fresh)
    return fresh
  }

  /** A managed node's card is projected from its spec (description, skills); one function for both kinds. */
  private sign (node: LocalNode, addrs: string[], issuedAt: number, expiresAt: number): Cached {
    const hostPeerId = this.libp2p.peerId.toString()
    const card = signCard(buildCard({
      nodeId: node.record.id,
      name: node.record.name,
      // a2a nodes get no amesh card (the host keeps them off the mesh: host/components.ts meshNodes)
      kind: node.record.kind === 'managed' ? 'managed' : 'external',
      hostPeerId,
      hostAddrs: addrs,
      parent: node.record.parent,
      description: node.record.card?.description,
      skills: node.record.card?.skills,
      a2aBaseUrl: this.a2aBaseUrl,
      issuedAt,
      expiresAt
    }), node.key)
    const claim = signNameClaim({ name: node.record.name, nodeId: node.record.id, hostPeerId, issuedAt, expiresAt }, node.key)
    return { card, claim, addrs: addrs.join(' '), issuedAt }
  }

  /**
   * Withdraw a (stopped managed) node's card: from now on its card is one
   * newer than any before, valid only `grace` ms, so hosts that learn it drop
   * the node soon after. `restore` ends the withdrawal.
   */
  withdraw (node: LocalNode, grace: number, now = Date.now()): void {
    if (this.withdrawn.has(node.record.id)) return
    const issuedAt = Math.max(now, (this.cache.get(node.record.id)?.issuedAt ?? this.floor.get(node.record.id) ?? 0) + 1)
    this.withdrawn.set(node.record.id, this.sign(node, this.addrs(), issuedAt, issuedAt + Math.max(1, grace)))
    this.cache.delete(node.record.id)
  }

  restore (nodeId: string): void {
    const gone = this.withdrawn.get(nodeId)
    if (gone === undefined) return
    this.withdrawn.delete(nodeId)
    this.floor.set(nodeId, gone.issuedAt)
  }

  cardOf (node: LocalNode, now = Date.now()): SignedAgentCard {
    return this.current(node, now).card
  }

  /** The node's signed claim on its name, issued with its current card. */
  claimOf (node: LocalNode, now = Date.now()): SignedNameClaim {
    return this.current(node, now).claim
  }

  invalidate (nodeId: string): void {
    const hit = this.cache.get(nodeId)
    if (hit !== undefined) this.floor.set(nodeId, hit.issuedAt)
    this.cache.delete(nodeId)
  }
}
