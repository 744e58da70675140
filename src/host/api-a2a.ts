// Control methods of the A2A face (issue 13; docs/A2A.md): client credentials,
// durable tasks and their event history. The face (src/a2a) is a control-socket
// client; what it may do as a caller is decided here and by the ACL, never by it.
import { createHash, randomBytes } from 'node:crypto'
import {
  A2aCredentialExpiredError, A2aCredentialRevokedError, A2aUnauthenticatedError, A2aWrongAudienceError, type A2aInfo
} from '../control/a2a-methods.js'
import type { Handlers } from '../control/server.js'
import { A2aRecords } from '../store/a2a.js'
import { DECISION_CACHE_MAX, DECISION_TTL_MS } from '../authz/decision-cache.js'
import { UnknownNodeError } from '../util/errors.js'
import { BoundedIndex } from '../util/lru.js'
import type { Components } from './components.js'

type A2aApiComponents = Pick<Components, 'acl' | 'registry' | 'nodes' | 'db' | 'committer'>

/** What the running face reports (filled by the daemon once it listens). */
export interface A2aFaceState { info: A2aInfo }

export function a2aOff (): A2aFaceState {
  return { info: { listen: null, base_url: null, tls: false, clients: [], warning: null, body_limit: 0, rate_per_minute: 0 } }
}

/** The bearer secret's record key: its SHA-256 (the secret is never stored). */
export function credentialHash (secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

const SECRET_PREFIX = 'amesh-a2a.'
const SECRET_BYTES = 32

type A2aMethod = 'a2a.info' | 'a2a.client.grant' | 'a2a.auth' | 'a2a.task.put' | 'a2a.task.commit' | 'a2a.task.link' | 'a2a.task.get' | 'a2a.task.list' | 'a2a.task.find' | 'a2a.event.append' | 'a2a.events'

/**
 * The grant chains found unrevoked lately: each checked again once the ACL
 * store changed (every new revocation, durable or pending, bumps its
 * generation) or after DECISION_TTL_MS, as a cached ACL decision is.
 */
class UnrevokedChains {
  private readonly seen = new BoundedIndex<{ gen: number, at: number }>(DECISION_CACHE_MAX)
  constructor (private readonly acl: A2aApiComponents['acl']) {}

  revoked (tokenId: string, chain: readonly Uint8Array[], now: number): boolean {
    const gen = this.acl.store.generation
    const hit = this.seen.get(tokenId)
    if (hit !== undefined && hit.gen === gen && now >= hit.at && now - hit.at < DECISION_TTL_MS) return false
    if (this.acl.isChainRevoked(chain)) return true
    this.seen.set(tokenId, { gen, at: now })
    return false
  }
}

export function a2aMethods (host: A2aApiComponents, state: A2aFaceState): Handlers<A2aMethod> {
  const records = new A2aRecords(host.db, host.committer)
  const unrevoked = new UnrevokedChains(host.acl)
  return {
    'a2a.info': { call: async () => ({ ...state.info, clients: await records.clientNames() }) },
    'a2a.client.grant': { call: async (p) => await grantClient(host, records, p) },
    'a2a.auth': { call: async (p) => await authenticate(host, records, unrevoked, p.credential, p.target) },
    'a2a.task.put': {
      call: async (p) => {
        const held = await records.putTask(p.node, p.task_id, { owner: p.owner, task: p.task, updated: Date.now() })
        return { ok: true as const, held }
      }
    },
    'a2a.task.commit': {
      call: async (p) => {
        const r = await records.commit(p)
        return { seq: r.seq ?? null, stored: r.stored, held: r.held }
      }
    },
    'a2a.task.link': {
      call: async (p) => {
        await records.link(p.node, p.task_id, p.packets, p.context)
        return { ok: true as const }
      }
    },
    'a2a.task.get': { call: async (p) => (await records.getTask(p.node, p.task_id)) ?? null },
    'a2a.task.list': { call: async (p) => await records.listTasks(p.node, p.owner, p.limit ?? 1000) },
    'a2a.task.find': {
      call: async (p) => (p.packet !== undefined ? await records.taskOfPacket(p.packet) : undefined) ??
        (p.context !== undefined ? await records.taskOfContext(p.context) : undefined) ?? null
    },
    'a2a.event.append': { call: async (p) => ({ seq: await records.appendEvent(p.task_id, p.event) }) },
    'a2a.events': { call: async (p) => await records.events(p.task_id, p.after, p.limit ?? 10_000) }
  }
}

interface GrantParams { as: string, name: string, signals?: Array<'SPAWN' | 'RETURN' | 'BLOCKED_ON' | 'CHECKPOINT' | 'HANDOFF' | 'ESCALATE' | 'ERROR' | 'MESSAGE'>, expires_ms?: number }

/**
 * A new client node NAME (a root: no group relation to anyone), a grant from
 * `as` that lets it send to `as`, and one from it back to `as` so that `as` can
 * answer; the bearer secret is answered once and only its hash is kept.
 */
async function grantClient (host: A2aApiComponents, records: A2aRecords, p: GrantParams): Promise<{ name: string, node_id: string, token_id: string, reply_token_id: string, grantor: string, secret: string, expires: string }> {
  const grantor = host.nodes.get(p.as)
  if (grantor === undefined) throw new UnknownNodeError(`no node named ${p.as} on this host to issue the grant`)
  const client = await host.registry.add(p.name)
  const token = await host.acl.grant({ as: p.as, to: client.record.id, signals: p.signals, expiresMs: p.expires_ms })
  const back = await host.acl.grant({ as: client.record.name, to: grantor.record.id, expiresMs: p.expires_ms })
  const secret = SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url')
  await records.putCredential(credentialHash(secret), {
    name: client.record.name,
    node_id: client.record.id,
    token_id: token.id,
    grantor: grantor.record.name,
    grantor_id: grantor.record.id,
    created: Date.now(),
    expires: token.exp
  })
  return { name: client.record.name, node_id: client.record.id, token_id: token.id, reply_token_id: back.id, grantor: grantor.record.name, secret, expires: new Date(token.exp).toISOString() }
}

/** The client a credential stands for, when it may call node `target` now; else a named refusal. */
async function authenticate (host: A2aApiComponents, records: A2aRecords, unrevoked: UnrevokedChains, hash: string, target: string): Promise<{ name: string, node_id: string, token_id: string, grantor: string }> {
  const cred = await records.credential(hash)
  if (cred === undefined) throw new A2aUnauthenticatedError('unknown A2A credential')
  const chain = host.acl.store.findIssued(cred.token_id)
  if (chain === undefined || unrevoked.revoked(cred.token_id, chain.chain, Date.now())) throw new A2aCredentialRevokedError(`the grant ${cred.token_id} of A2A client ${cred.name} is revoked`)
  if (Date.now() >= chain.exp) throw new A2aCredentialExpiredError(`the grant ${cred.token_id} of A2A client ${cred.name} expired ${new Date(chain.exp).toISOString()}`)
  if (host.nodes.get(cred.name) === undefined) throw new A2aCredentialRevokedError(`A2A client ${cred.name} was removed`)
  const node = host.nodes.get(target)
  if (node === undefined) throw new UnknownNodeError(`no node named ${target} on this host`)
  if (node.record.id !== chain.sub) throw new A2aWrongAudienceError(`this credential is for ${cred.grantor}, not ${target}`)
  return { name: cred.name, node_id: cred.node_id, token_id: cred.token_id, grantor: cred.grantor }
}
