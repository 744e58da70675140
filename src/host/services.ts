// The host's services built from the components each names, and wired
// where the host needs them: discovery's lookup into resolution and its
// announce into node announcement; managed nodes over the host's stores,
// cards, ACL and resolution.
import { createAgents, type AgentsComponents, type AgentsService } from '../agents/service.js'
import { createDiscovery, type DiscoveryComponents, type DiscoveryInit, type DiscoveryService } from '../discovery/service.js'
import type { Host } from './host.js'
import { resolveTarget } from './resolve.js'

/** The services a daemon runs beside its host (absent ones answer their control methods with an error). */
export interface HostServices {
  discovery?: DiscoveryService
  agents?: AgentsService
}

export function discoveryComponents (host: Host): DiscoveryComponents {
  return { libp2p: host.libp2p, directory: host.directory, nodes: host.nodes, cards: host.cards, log: host.log, db: host.db, committer: host.committer }
}

/** Discovery over a started host, wired into its resolution and announcements, and started. */
export async function startDiscovery (host: Host, init: DiscoveryInit = {}): Promise<DiscoveryService> {
  const discovery = createDiscovery(discoveryComponents(host), init)
  host.lookup = async (target) => await discovery.lookup(target)
  host.onAnnounce = () => { discovery.announce() }
  await discovery.start()
  return discovery
}

export function agentsComponents (host: Host): AgentsComponents {
  return {
    libp2p: host.libp2p,
    nodes: host.nodes,
    cards: host.cards,
    directory: host.directory,
    exchange: host.exchange,
    acl: host.acl,
    resolve: async (target) => await resolveTarget(host, target),
    label: (id) => host.label(id),
    announce: () => { host.announce() },
    paths: host.paths,
    maxDepth: host.config.maxDepth,
    log: host.log
  }
}

/** Managed nodes over a started host, serving placement (call `restore()` once the control socket is up). */
export async function startAgents (host: Host): Promise<AgentsService> {
  const agents = createAgents(agentsComponents(host))
  await agents.start()
  return agents
}
