import { agentsOf } from '../agents/install.js'
import { issueHostGrant } from '../agents/host-grant.js'
import type { AgentManager } from '../agents/manager.js'
import type { Handlers } from '../control/server.js'
import { InvalidArgumentError } from '../util/errors.js'
import type { Host } from './host.js'

function manager (host: Host): AgentManager {
  const m = agentsOf(host)
  if (m === undefined) throw new InvalidArgumentError('managed nodes are not available in this daemon')
  return m
}

/** Control methods of the agents capability (managed nodes, host grants). */
export function agentsMethods (host: Host): Handlers<'agent.start' | 'agent.stop' | 'agent.ls' | 'agent.heartbeat' | 'agent.host-grant'> {
  return {
    'agent.start': {
      call: async (p) => await manager(host).start(p)
    },
    'agent.stop': { call: async (p) => await manager(host).stop(p.name) },
    'agent.ls': { call: async () => manager(host).list() },
    'agent.heartbeat': { call: async (p) => manager(host).beat(p.name) },
    'agent.host-grant': {
      call: async (p) => {
        const r = await issueHostGrant(host, manager(host).issuer, { to: p.to, cmd: p.cmd, expiresMs: p.expires_ms })
        return { token_id: r.id, issuer: 'host', issuer_id: r.iss, audience: host.label(r.aud), audience_id: r.aud, cmd: r.cmd, expires: new Date(r.exp).toISOString(), handed: r.handed }
      }
    }
  }
}
