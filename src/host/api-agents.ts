import type { AgentsService } from '../agents/service.js'
import type { Handlers } from '../control/server.js'
import { InvalidArgumentError } from '../util/errors.js'
import type { Components } from './components.js'

function service (host: Components): AgentsService {
  const a = host.agents
  if (a === undefined) throw new InvalidArgumentError('managed nodes are not available in this daemon')
  return a
}

function manager (host: Components): AgentsService['manager'] {
  return service(host).manager
}

/** Control methods of the agents capability (managed nodes, host grants). */
export function agentsMethods (host: Components): Handlers<'agent.start' | 'agent.stop' | 'agent.ls' | 'agent.heartbeat' | 'agent.host-grant'> {
  return {
    'agent.start': {
      call: async (p) => await manager(host).start(p)
    },
    'agent.stop': { call: async (p) => await manager(host).stop(p.name) },
    'agent.ls': { call: async () => manager(host).list() },
    'agent.heartbeat': { call: async (p) => manager(host).beat(p.name) },
    'agent.host-grant': {
      call: async (p) => {
        const r = await service(host).issueHostGrant({ to: p.to, cmd: p.cmd, expiresMs: p.expires_ms })
        return { token_id: r.id, issuer: 'host', issuer_id: r.iss, audience: host.label(r.aud), audience_id: r.aud, cmd: r.cmd, expires: new Date(r.exp).toISOString(), handed: r.handed }
      }
    }
  }
}
