import type { Handlers } from '../control/server.js'
import { isLoopback } from '../discovery/addrs.js'
import type { DiscoveryService } from '../discovery/service.js'
import type { SshJoins } from '../discovery/tunnels.js'
import { TunnelError, type RemoteInfo } from '../discovery/ssh.js'
import { UnknownMethodError } from '../util/errors.js'
import type { Components } from './components.js'

type DiscoveryApiComponents = Pick<Components, 'libp2p' | 'config' | 'nodes' | 'discovery' | 'joins'>

/** Where this host's amesh accepts connections, as seen from this host (the end of an SSH tunnel). */
export function tunnelTarget (host: Pick<Components, 'libp2p' | 'config'>): RemoteInfo['tunnelTarget'] {
  const addrs = host.libp2p.getMultiaddrs().map((a) => a.toOptions()).filter((o) => o.transport === 'tcp')
  const loop = addrs.find((o) => isLoopback(`/ip${o.family}/${o.host}`))
  if (loop !== undefined) return { host: loop.host, port: loop.port }
  const first = addrs.find((o) => o.family === 4) ?? addrs[0]
  if (first === undefined) throw new TunnelError('this host has no TCP address to tunnel to')
  const wildcard = host.config.listen.some((l) => l.startsWith('/ip4/0.0.0.0/') || l.startsWith('/ip6/::/'))
  return wildcard ? { host: '127.0.0.1', port: first.port } : { host: first.host, port: first.port }
}

function parts (host: DiscoveryApiComponents): { discovery: DiscoveryService, joins: SshJoins } {
  const { discovery, joins } = host
  if (discovery === undefined || joins === undefined) throw new UnknownMethodError('discovery is not running on this host')
  return { discovery, joins }
}

/** Control methods of the discovery capability. */
export function discoveryMethods (host: DiscoveryApiComponents): Handlers<'discovery.info' | 'discovery.lookup' | 'discovery.publish' | 'join.ssh' | 'join.tunnels' | 'join.leave'> {
  return {
    'discovery.info': {
      call: async (): Promise<RemoteInfo> => ({ peerId: host.libp2p.peerId.toString(), addrs: host.libp2p.getMultiaddrs().map(String), tunnelTarget: tunnelTarget(host) })
    },
    'discovery.lookup': {
      call: async (p) => (await parts(host).discovery.resolve(p.target)).map((vc) => vc.card)
    },
    'discovery.publish': {
      call: async () => { await parts(host).discovery.publishAll(); return { published: host.nodes.list().length } }
    },
    'join.ssh': {
      call: async (p) => await parts(host).joins.join({ ...p, options: p.options ?? [] })
    },
    'join.tunnels': { call: async () => parts(host).joins.list() },
    'join.leave': {
      call: async (p) => ({ removed: await parts(host).joins.leave(p.target) })
    }
  }
}
