// Resolution: a node name or id becomes a target of one kind. Each kind has
// one transport (the `Transports` table of routing/send.ts, filled in host/components.ts); a new way to reach a node (a
// relayed connection, an agent behind another protocol) is a new kind here
// plus its transport, not a new branch in `send`.
import type { CardExchange } from '../discovery/cards-protocol.js'
import type { VerifiedCard } from '../discovery/card.js'
import type { Directory } from '../discovery/directory.js'
import { isNodeId } from '../identity/node-key.js'
import type { LocalNode, NodeStore } from '../store/nodes.js'
import { UnknownNodeError } from '../util/errors.js'

/** A node on this host: delivered straight into its inbox. */
export interface LocalTarget { readonly kind: 'local', readonly id: string, readonly name: string, readonly node: LocalNode }
/** A node on a remote amesh host, named by its signed card: delivered over a libp2p peer link. */
export interface RemoteTarget { readonly kind: 'remote', readonly id: string, readonly name: string, readonly host: string, readonly card: VerifiedCard }

/**
 * An external A2A agent registered on this host (`amesh node add-a2a`): a
 * node record of kind `a2a` (its key lets it grant, its id is the `from` of
 * its answers), reached over HTTP with an A2A client.
 */
export interface A2aTarget { readonly kind: 'a2a', readonly id: string, readonly name: string, readonly node: LocalNode }

export type Target = LocalTarget | RemoteTarget | A2aTarget
export type TargetKind = Target['kind']

/** Something that can find a target this host does not know yet (the DHT); true when it learnt it. */
export interface TargetFinder { lookup: (target: string) => Promise<boolean> }

export interface ResolverComponents {
  nodes: Pick<NodeStore, 'get'>
  directory: Pick<Directory, 'get' | 'byNameUnique'>
  exchange: Pick<CardExchange, 'exchangeUnexchanged'>
  /** asked, at the same time as the card exchange, for a target not known here */
  finders: readonly TargetFinder[]
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

export class Resolver {
  constructor (private readonly components: ResolverComponents) {}

  /** A node id's name, when this host knows it (a local node, then a known card); else the id. */
  readonly label = (nodeId: string): string => {
    const { nodes, directory } = this.components
    return nodes.get(nodeId)?.record.name ?? directory.get(nodeId)?.name ?? nodeId
  }

  /** resolve for a target known here (a local node, a known card): without waiting; undefined when resolve must look further. */
  known (target: string): Target | undefined {
    return this.fromCache(target)
  }

  private fromCache (target: string): Target | undefined {
    const { nodes, directory } = this.components
    const local = nodes.get(target)
    if (local?.record.kind === 'a2a') return { kind: 'a2a', id: local.record.id, name: local.record.name, node: local }
    if (local !== undefined) return { kind: 'local', id: local.record.id, name: local.record.name, node: local }
    const card = isNodeId(target) ? directory.get(target) : directory.byNameUnique(target)
    if (card !== undefined) return { kind: 'remote', id: card.nodeId, name: card.name, host: card.hostPeerId, card }
    return undefined
  }

  /**
   * Resolve a node name or id: local nodes, then cards already known, then —
   * at the same time — a card exchange with the connected hosts not yet
   * exchanged with on their current connection and the finders (the DHT,
   * when it runs); the first that yields the target answers. Concurrent
   * resolves share the exchanges in flight and the DHT lookup of the same target.
   */
  async resolve (target: string): Promise<Target> {
    const cached = this.fromCache(target)
    if (cached !== undefined) return cached
    const attempts = [this.components.exchange.exchangeUnexchanged().then(() => this.fromCache(target))]
    for (const finder of this.components.finders) attempts.push(finder.lookup(target).then(() => this.fromCache(target)))
    const found = await firstFound(attempts)
    if (found !== undefined) return found
    throw new UnknownNodeError(`unknown node: ${target} (no local node, no known card, and no connected host serves it)`)
  }
}
