import { z } from 'zod'
import { method, type MethodTable } from '../control/server.js'
import { isLoopback } from '../discovery/addrs.js'
import type { DiscoveryService } from '../discovery/service.js'
import type { SshJoins } from '../discovery/tunnels.js'
import { TunnelError, type RemoteInfo } from '../discovery/ssh.js'
import { UnknownMethodError } from '../util/errors.js'
import type { Components } from './components.js'

type DiscoveryApiComponents = Pick<Components, 'libp2p' | 'config' | 'nodes' | 'discovery' | 'joins'>

const word = z.string().min(1).max(4096)

const sshJoinSchema = z.object({
  destination: z.string().min(1).max(512).regex(/^[^-\s][^\s]*$/, 'an ssh destination may not start with "-" or hold spaces'),
  port: z.number().int().min(1).max(65535).optional(),
  identity: word.optional(),
  config: word.optional(),
  options: z.array(word.regex(/^[^-]/, 'an ssh -o option may not start with "-"')).max(64).optional(),
  remoteAmesh: word.optional(),
  remoteHome: word.optional()
}).strict()

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
export function discoveryMethods (host: DiscoveryApiComponents): MethodTable {
  return {
    'discovery.info': method({
      params: z.object({}).strict(),
      call: async (): Promise<RemoteInfo> => ({ peerId: host.libp2p.peerId.toString(), addrs: host.libp2p.getMultiaddrs().map(String), tunnelTarget: tunnelTarget(host) })
    }),
    'discovery.lookup': method({
      params: z.object({ target: z.string().min(1).max(256) }).strict(),
      call: async (p) => (await parts(host).discovery.resolve(p.target)).map((vc) => vc.card)
    }),
    'discovery.publish': method({
      params: z.object({}).strict(),
      call: async () => { await parts(host).discovery.publishAll(); return { published: host.nodes.list().length } }
    }),
    'join.ssh': method({
      params: sshJoinSchema,
      call: async (p) => await parts(host).joins.join({ ...p, options: p.options ?? [] })
    }),
    'join.tunnels': method({ params: z.object({}).strict(), call: async () => parts(host).joins.list() }),
    'join.leave': method({
      params: z.object({ target: z.string().min(1).max(1024) }).strict(),
      call: async (p) => ({ removed: await parts(host).joins.leave(p.target) })
    })
  }
}
