import { z } from 'zod'
import type { AgentsService } from '../agents/service.js'
import { method, type MethodTable } from '../control/server.js'
import { InvalidArgumentError } from '../util/errors.js'
import type { Components } from './components.js'

const name = z.string().min(1).max(256)

function service (host: Components): AgentsService {
  const a = host.agents
  if (a === undefined) throw new InvalidArgumentError('managed nodes are not available in this daemon')
  return a
}

function manager (host: Components): AgentsService['manager'] {
  return service(host).manager
}

/** Control methods of the agents capability (managed nodes, host grants). */
export function agentsMethods (host: Components): MethodTable {
  return {
    'agent.start': method({
      params: z.object({ path: z.string().min(1).max(4096), name: name.optional(), parent: name.optional() }).strict(),
      call: async (p) => await manager(host).start(p)
    }),
    'agent.stop': method({ params: z.object({ name }).strict(), call: async (p) => await manager(host).stop(p.name) }),
    'agent.ls': method({ params: z.object({}).strict(), call: async () => manager(host).list() }),
    'agent.heartbeat': method({ params: z.object({ name }).strict(), call: async (p) => manager(host).beat(p.name) }),
    'agent.host-grant': method({
      params: z.object({ to: name, cmd: z.string().min(1).max(256), expires_ms: z.number().int().positive().optional() }).strict(),
      call: async (p) => {
        const r = await service(host).issueHostGrant({ to: p.to, cmd: p.cmd, expiresMs: p.expires_ms })
        return { token_id: r.id, issuer: 'host', issuer_id: r.iss, audience: host.label(r.aud), audience_id: r.aud, cmd: r.cmd, expires: new Date(r.exp).toISOString(), handed: r.handed }
      }
    })
  }
}
