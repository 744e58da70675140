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
import type { AgentComponents as Host } from './components.js'
import { generateNodeKey, importNodeKey, type NodeKey } from '../identity/node-key.js'
import { InvalidArgumentError } from '../util/errors.js'
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

/** Issue a host grant and hand it to the audience's host. */
export async function issueHostGrant (host: Host, issuer: NodeKey, req: HostGrantRequest): Promise<ChainRecord & { handed: boolean, cmd: string }> {
  if (!isCommand(req.cmd)) throw new InvalidArgumentError(`--cmd must be a command path such as /agent/start (got ${req.cmd})`)
  const audience = await host.resolver.resolve(req.to)
  const token = issueToken(issuer, { aud: audience.id, sub: issuer.id, cmd: req.cmd, exp: Date.now() + (req.expiresMs ?? DEFAULT_LIFETIME) })
  const chain = [encodeToken(token)]
  const record = await host.acl.store.issue(chain)
  let handed = true
  if (audience.kind === 'local') await host.acl.store.hold(chain)
  else handed = await new GrantExchange(host.libp2p, { learn: async () => {}, bundleFor: () => ({ chains: [], revocations: [] }) }, host.log).pushTo(peerIdFromString(audience.host), { chains: [chain], revocations: [] })
  return { ...record, handed, cmd: req.cmd }
}

/** Chains a local node holds whose every link covers `cmd` (host grants it may present). */
export function presentable (host: Host, nodeId: string, cmd: string): Uint8Array[][] {
  return host.acl.store.allHeld()
    .filter((r) => r.aud === nodeId && r.chain.every((b) => commandCovers(decodeToken(b).payload.cmd, cmd)))
    .sort((a, b) => b.exp - a.exp)
    .slice(0, MAX_PRESENTED)
    .map((r) => r.chain)
}

/** Throws HostGrantError unless one chain is a live grant of `cmd` by this host's issuer to `requester`. */
export function checkHostGrant (host: Host, issuerId: string, chains: Uint8Array[][], requester: string, requesterName: string, cmd: string): void {
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
      isRevoked: (id, issuers) => host.acl.store.revocationsOf(id).some((rev) => revokerCounts(rev.revoker, issuers))
    })
    if (r.ok) return
    reason = `${r.code}: ${r.reason}`
  }
  throw new HostGrantError(`host ${host.libp2p.peerId.toString()} refused ${cmd} for ${requesterName}: ${reason}; its operator can allow it with: amesh grant --host --to ${requesterName} --cmd ${cmd}`)
}
