import type { Libp2p } from '@libp2p/interface'
import { buildCard, signCard, type SignedAgentCard } from '../discovery/card.js'
import { signNameClaim, type SignedNameClaim } from '../discovery/records.js'
import type { LocalNode } from '../store/nodes.js'
import { HOUR } from '../delivery/constants.js'

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
  private readonly lifetime: number
  private readonly refresh: number

  constructor (private readonly libp2p: Libp2p, opts: LocalCardsOptions = {}) {
    this.lifetime = opts.lifetime ?? CARD_LIFETIME
    this.refresh = Math.min(opts.refresh ?? CARD_REFRESH, this.lifetime / 2)
  }

  private addrs (): string[] {
    return this.libp2p.getMultiaddrs().map((a) => a.toString())
  }

  private current (node: LocalNode, now: number): Cached {
    const addrs = this.addrs()
    const key = addrs.join(' ')
    const hit = this.cache.get(node.record.id)
    if (hit !== undefined && hit.addrs === key && now - hit.issuedAt < this.refresh) return hit
    const issuedAt = Math.max(now, (hit?.issuedAt ?? 0) + 1)
    const expiresAt = issuedAt + this.lifetime
    const hostPeerId = this.libp2p.peerId.toString()
    const card = signCard(buildCard({
      nodeId: node.record.id,
      name: node.record.name,
      kind: node.record.kind,
      hostPeerId,
      hostAddrs: addrs,
      parent: node.record.parent,
      issuedAt,
      expiresAt
    }), node.key)
    const claim = signNameClaim({ name: node.record.name, nodeId: node.record.id, hostPeerId, issuedAt, expiresAt }, node.key)
    const fresh = { card, claim, addrs: key, issuedAt }
    this.cache.set(node.record.id, fresh)
    return fresh
  }

  cardOf (node: LocalNode, now = Date.now()): SignedAgentCard {
    return this.current(node, now).card
  }

  /** The node's signed claim on its name, issued with its current card. */
  claimOf (node: LocalNode, now = Date.now()): SignedNameClaim {
    return this.current(node, now).claim
  }

  invalidate (nodeId: string): void {
    this.cache.delete(nodeId)
  }
}
