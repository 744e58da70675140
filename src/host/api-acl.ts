import { z } from 'zod'
import { method, type MethodTable } from '../control/server.js'
import { SIGNALS, ZONES } from '../packet/types.js'
import type { ChainRecord } from '../authz/acl-store.js'
import type { Host } from './host.js'

const name = z.string().min(1).max(256)

function view (host: Host, r: ChainRecord): Record<string, unknown> {
  return {
    token_id: r.id,
    issuer: host.label(r.iss),
    issuer_id: r.iss,
    audience: host.label(r.aud),
    audience_id: r.aud,
    subject: host.label(r.sub),
    subject_id: r.sub,
    signals: r.signals ?? 'any',
    zones: r.zones ?? 'any',
    expires: new Date(r.exp).toISOString(),
    chain_length: r.chain.length,
    // only a revocation by an issuer in the chain applies (a stranger's statement changes nothing)
    revoked: host.acl.isChainRevoked(r.chain)
  }
}

/** Control methods of the permissions capability. */
export function aclMethods (host: Host): MethodTable {
  return {
    grant: method({
      params: z.object({
        as: name,
        to: name,
        sub: name.optional(),
        signals: z.array(z.enum(SIGNALS)).optional(),
        zones: z.array(z.enum(ZONES)).optional(),
        expires_ms: z.number().int().positive().optional(),
        delegate: z.string().min(1).optional()
      }).strict(),
      call: async (p) => {
        const r = await host.acl.grant({ as: p.as, to: p.to, sub: p.sub, signals: p.signals, zones: p.zones, expiresMs: p.expires_ms, delegate: p.delegate })
        return { ...view(host, r), handed: r.handed }
      }
    }),
    revoke: method({
      params: z.object({ as: name, token_id: z.string().min(1) }).strict(),
      call: async (p) => await host.acl.revoke(p.as, p.token_id)
    }),
    grants: method({
      params: z.object({}).strict(),
      call: async () => ({
        held: host.acl.store.allHeld().map((r) => view(host, r)),
        issued: host.acl.store.allIssued().map((r) => view(host, r))
      })
    }),
    block: method({
      params: z.object({ as: name, sender: name, on: z.boolean() }).strict(),
      call: async (p) => await host.acl.block(p.as, p.sender, p.on)
    }),
    'profile.set': method({
      params: z.object({ as: name, profile: z.record(z.unknown()) }).strict(),
      call: async (p) => await host.acl.setProfile(p.as, p.profile)
    })
  }
}
