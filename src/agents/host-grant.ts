// Host grants: capability tokens issued by a host-level issuer — a key that
// speaks for the host (kept in <home>/agents/.host-issuer.key, never a node
// on the graph). `amesh grant --host --to NODE --cmd /agent/start` lets NODE
// place managed nodes on this host. The token (iss = sub = the host issuer,
// aud = NODE) is handed to NODE's host like any grant; NODE's host presents it
// with a placement request and this host verifies it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { commandCovers, decodeToken, encodeToken, isCommand, issueToken, revokerCounts, verifyChain } from '../acl/index.js'
import { GrantExchange } from '../authz/grant-exchange.js'
import type { ChainRecord } from '../authz/acl-store.js'
import type { Libp2p } from '@libp2p/interface'
import { generateNodeKey, importNodeKey, type NodeKey } from '../identity/node-key.js'
import { InvalidArgumentError } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { AgentsAcl, ResolveNode } from './components.js'
import { HOST_ISSUER_FILE } from './constants.js'
import { HostGrantError } from './errors.js'
import { DAY } from '../util/time.js'

const DEFAULT_LIFETIME = 30 * DAY
/** Chains presented with one request, at most. */
export const MAX_PRESENTED = 32

export function loadOrCreateIssuer (agentsDir: string): NodeKey {
  const file = join(agentsDir, HOST_ISSUER_FILE)
  if (existsSync(file)) return importNodeKey(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'))
  mkdirSync(agentsDir, { recursive: true, mode: 0o700 })
  const key = generateNodeKey()
  writeFileSync(file, Buffer.from(key.exportPrivate()).toString('base64') + '\n', { mode: 0o600, flag: 'wx' })
  return key
}

export interface HostGrantRequest { to: string, cmd: string, expiresMs?: number }

/** What issuing a host grant uses: the grant store, resolution, and libp2p to hand the grant over. */
export interface HostGrantComponents {
  acl: { store: Pick<AgentsAcl['store'], 'issue' | 'hold'> }
  resolve: ResolveNode
  libp2p: Libp2p
  log: Logger
}

/** What checking a presented host grant uses: revocations, and this host's peer id (named in the refusal). */
export interface HostGrantCheckComponents {
  acl: { store: Pick<AgentsAcl['store'], 'revocationsOf'> }
  libp2p: Pick<Libp2p, 'peerId'>
}

/** Issue a host grant and hand it to the audience's host. */
export async function issueHostGrant (components: HostGrantComponents, issuer: NodeKey, req: HostGrantRequest): Promise<ChainRecord & { handed: boolean, cmd: string }> {
  if (!isCommand(req.cmd)) throw new InvalidArgumentError(`--cmd must be a command path such as /agent/start (got ${req.cmd})`)
  const audience = await components.resolve(req.to)
  const token = issueToken(issuer, { aud: audience.id, sub: issuer.id, cmd: req.cmd, exp: Date.now() + (req.expiresMs ?? DEFAULT_LIFETIME) })
  const chain = [encodeToken(token)]
  const { store } = components.acl
  const record = await store.issue(chain)
  let handed = true
  if (audience.kind !== 'remote') await store.hold(chain)
  else handed = await new GrantExchange(components.libp2p, { learn: async () => {}, bundleFor: () => ({ chains: [], revocations: [] }) }, components.log).pushTo(peerIdFromString(audience.host), { chains: [chain], revocations: [] })
  return { ...record, handed, cmd: req.cmd }
}

/** Chains a local node holds whose every link covers `cmd` (host grants it may present). */
export function presentable (store: Pick<AgentsAcl['store'], 'allHeld'>, nodeId: string, cmd: string): Uint8Array[][] {
  return store.allHeld()
    .filter((r) => r.aud === nodeId && r.chain.every((b) => commandCovers(decodeToken(b).payload.cmd, cmd)))
    .sort((a, b) => b.exp - a.exp)
    .slice(0, MAX_PRESENTED)
    .map((r) => r.chain)
}

/** Throws HostGrantError unless one chain is a live grant of `cmd` by this host's issuer to `requester`. */
export function checkHostGrant (components: HostGrantCheckComponents, issuerId: string, chains: Uint8Array[][], requester: string, requesterName: string, cmd: string): void {
  let reason = 'no host grant was presented'
  for (const chain of chains.slice(0, MAX_PRESENTED)) {
    const r = verifyChain(chain, {
      sender: requester,
      target: issuerId,
      signal: 'SPAWN',
      zone: 'project',
      cmd,
      now: Date.now(),
      speaksFor: (iss, sub) => iss === sub,
      isRevoked: (id, issuers) => components.acl.store.revocationsOf(id).some((rev) => revokerCounts(rev.revoker, issuers))
    })
    if (r.ok) return
    reason = `${r.code}: ${r.reason}`
  }
  throw new HostGrantError(`host ${components.libp2p.peerId.toString()} refused ${cmd} for ${requesterName}: ${reason}; its operator can allow it with: amesh grant --host --to ${requesterName} --cmd ${cmd}`)
}
