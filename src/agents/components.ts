// What managed nodes use of their host (handed over by the composition root, src/host/components.ts).
import type { Libp2p } from '@libp2p/interface'
import type { AclService } from '../authz/acl-service.js'
import type { HomePaths } from '../control/paths.js'
import type { CardExchange } from '../discovery/cards-protocol.js'
import type { Directory } from '../discovery/directory.js'
import type { LocalCards } from '../discovery/local-cards.js'
import type { Resolver } from '../routing/resolve.js'
import type { NodeStore } from '../store/nodes.js'
import type { Logger } from '../util/log.js'

export interface AgentComponents {
  readonly paths: Pick<HomePaths, 'home' | 'agents'>
  readonly config: { readonly maxDepth: number }
  readonly log: Logger
  readonly libp2p: Libp2p
  readonly nodes: NodeStore
  readonly cards: LocalCards
  readonly directory: Directory
  readonly exchange: CardExchange
  readonly acl: AclService
  readonly resolver: Pick<Resolver, 'resolve'>
  readonly label: (nodeId: string) => string
  readonly announce: () => void
}
