import type { Libp2p } from '@libp2p/interface'
import { buildCard, signCard, type SignedAgentCard } from '../discovery/card.js'
import type { LocalNode } from '../store/nodes.js'
import { DAY, HOUR } from '../delivery/constants.js'

const CARD_LIFETIME = DAY
const CARD_REFRESH = 6 * HOUR

interface Cached { card: SignedAgentCard, addrs: string, issuedAt: number }

/** Signed AgentCards of this host's nodes, re-signed when addresses change or they age. */
export class LocalCards {
  private readonly cache = new Map<string, Cached>()

  constructor (private readonly libp2p: Libp2p) {}

  private addrs (): string[] {
    return this.libp2p.getMultiaddrs().map((a) => a.toString())
  }

  cardOf (node: LocalNode, now = Date.now()): SignedAgentCard {
    const addrs = this.addrs()
    const key = addrs.join(' ')
    const hit = this.cache.get(node.record.id)
    if (hit !== undefined && hit.addrs === key && now - hit.issuedAt < CARD_REFRESH) return hit.card
    const issuedAt = Math.max(now, (hit?.issuedAt ?? 0) + 1)
    const card = signCard(buildCard({
      nodeId: node.record.id,
      name: node.record.name,
      kind: node.record.kind,
      hostPeerId: this.libp2p.peerId.toString(),
      hostAddrs: addrs,
      parent: node.record.parent,
      issuedAt,
      expiresAt: issuedAt + CARD_LIFETIME
    }), node.key)
    this.cache.set(node.record.id, { card, addrs: key, issuedAt })
    return card
  }

  invalidate (nodeId: string): void {
    this.cache.delete(nodeId)
  }
}
