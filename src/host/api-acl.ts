import type { Handlers } from '../control/server.js'
import type { GrantView } from '../control/wire.js'
import type { ChainRecord } from '../authz/acl-store.js'
import type { Components } from './components.js'

type AclApiComponents = Pick<Components, 'acl' | 'label'>

function view (host: AclApiComponents, r: ChainRecord): GrantView {
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
export function aclMethods (host: AclApiComponents): Handlers<'grant' | 'revoke' | 'grants' | 'block' | 'profile.set'> {
  return {
    grant: {
      call: async (p) => {
        const r = await host.acl.grant({ as: p.as, to: p.to, sub: p.sub, signals: p.signals, zones: p.zones, expiresMs: p.expires_ms, delegate: p.delegate })
        return { ...view(host, r), handed: r.handed, ...(r.expires_clamped === undefined ? {} : { expires_clamped: r.expires_clamped }) }
      }
    },
    revoke: {
      call: async (p) => await host.acl.revoke(p.as, p.token_id)
    },
    grants: {
      call: async () => ({
        held: host.acl.store.allHeld().map((r) => view(host, r)),
        issued: host.acl.store.allIssued().map((r) => view(host, r))
      })
    },
    block: {
      call: async (p) => await host.acl.block(p.as, p.sender, p.on)
    },
    'profile.set': {
      call: async (p) => await host.acl.setProfile(p.as, p.profile)
    }
  }
}
