import type { VerifiedCard } from '../discovery/card.js'
import { isNodeId } from '../identity/node-key.js'
import type { LocalNode } from '../store/nodes.js'
import { UnknownNodeError } from '../util/errors.js'
import type { Host } from './host.js'

export type Target =
  | { kind: 'local', id: string, name: string, node: LocalNode }
  | { kind: 'remote', id: string, name: string, host: string, card: VerifiedCard }

function fromCache (host: Host, target: string): Target | undefined {
  const local = host.nodes.get(target)
  if (local !== undefined) return { kind: 'local', id: local.record.id, name: local.record.name, node: local }
  const card = isNodeId(target) ? host.directory.get(target) : host.directory.byNameUnique(target)
  if (card !== undefined) return { kind: 'remote', id: card.nodeId, name: card.name, host: card.hostPeerId, card }
  return undefined
}

/**
 * Resolve a node name or id: local nodes, then cards already known, then a
 * fresh card exchange with connected hosts, then the DHT when it is running.
 */
export async function resolveTarget (host: Host, target: string): Promise<Target> {
  const cached = fromCache(host, target)
  if (cached !== undefined) return cached
  await host.exchange.exchangeAll()
  const fresh = fromCache(host, target)
  if (fresh !== undefined) return fresh
  const found = await host.lookup?.(target)
  if (found !== undefined) {
    const again = fromCache(host, target)
    if (again !== undefined) return again
  }
  throw new UnknownNodeError(`unknown node: ${target} (no local node, no known card, and no connected host serves it)`)
}
