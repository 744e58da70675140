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
 * The first attempt that yields a value; undefined when every attempt yielded
 * none. The first failure (a name collision) is the answer unless a value came
 * first; later outcomes are ignored (every attempt is observed, none goes unhandled).
 */
async function firstFound<T> (attempts: Array<Promise<T | undefined>>): Promise<T | undefined> {
  return await new Promise((resolve, reject) => {
    let pending = attempts.length
    if (pending === 0) { resolve(undefined); return }
    for (const attempt of attempts) {
      attempt.then((v) => {
        pending--
        if (v !== undefined || pending === 0) resolve(v)
      }, reject)
    }
  })
}

/**
 * Resolve a node name or id: local nodes, then cards already known, then —
 * at the same time — a card exchange with the connected hosts not yet
 * exchanged with on their current connection and a DHT lookup (when the DHT
 * runs); the first that yields the target answers. Concurrent resolves share
 * the exchanges in flight and the DHT lookup of the same target.
 */
export async function resolveTarget (host: Host, target: string): Promise<Target> {
  const cached = fromCache(host, target)
  if (cached !== undefined) return cached
  const attempts = [host.exchange.exchangeUnexchanged().then(() => fromCache(host, target))]
  const lookup = host.lookup
  if (lookup !== undefined) attempts.push(lookup(target).then(() => fromCache(host, target)))
  const found = await firstFound(attempts)
  if (found !== undefined) return found
  throw new UnknownNodeError(`unknown node: ${target} (no local node, no known card, and no connected host serves it)`)
}
