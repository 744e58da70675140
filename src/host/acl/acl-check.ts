import { decide, grantCommandFor, revokerCounts, speaksForFrom, verifyLineagePath, type Decision, type Party } from '../../acl/index.js'
import type { Denial } from '../../delivery/receiver.js'
import type { Packet } from '../../packet/types.js'
import type { LocalNode } from '../../store/nodes.js'
import { AccessDeniedError, errorCode, errorMessage, type AmeshError } from '../../util/errors.js'
import type { Host } from '../host.js'
import type { Target } from '../resolve.js'
import type { AclStore } from './acl-store.js'
import { lineagePathOf, localAncestors } from './lineage-path.js'

function profileOf (node: LocalNode): Party['profile'] {
  return node.record.profile as Party['profile']
}

function localParty (node: LocalNode): Party {
  return { id: node.record.id, name: node.record.name, parent: node.record.parent ?? null, profile: profileOf(node) }
}

/** The facts both sides feed to `decide`, apart from the parties. */
function context (host: Host, acl: AclStore): Pick<Parameters<typeof decide>[0], 'now' | 'isRevoked' | 'speaksFor'> {
  const ancestors = (id: string): string[] => {
    const node = host.nodes.get(id)
    if (node === undefined) return []
    try { return localAncestors(node.record) } catch { return [] }
  }
  const speaksFor = speaksForFrom(ancestors)
  return {
    now: Date.now(),
    speaksFor,
    isRevoked: (tokenId, issuers) => acl.revocationsOf(tokenId).some((r) => revokerCounts(r.revoker, issuers, speaksFor))
  }
}

/** Sender side: attach proof (lineage path, a held grant chain) and fail fast with the receiver's reason. */
export function checkSend (host: Host, acl: AclStore, packet: Packet, from: LocalNode, target: Target): Decision {
  const lineage = lineagePathOf(from.record)
  const targetParty: Party = target.kind === 'local' ? localParty(target.node) : { id: target.id, name: target.name, parent: target.card.parent ?? null }
  const base = {
    sender: localParty(from),
    target: targetParty,
    signal: packet.signal,
    zone: packet.scope.zone,
    blocked: target.kind === 'local' && acl.isBlocked(target.id, from.record.id),
    ...context(host, acl)
  }
  let decision = decide(base)
  let firstFailure: Decision | undefined
  for (const held of acl.heldFor(from.record.id, target.id)) {
    if (decision.allow) break
    const withGrant = decide({ ...base, grants: held.chain })
    if (withGrant.allow) { decision = withGrant; packet.proof = { ...(packet.proof ?? {}), grants: held.chain } }
    firstFailure ??= withGrant
  }
  // a held grant that no longer works says why (revoked, expired, signal not granted)
  if (!decision.allow && firstFailure !== undefined && !base.blocked) decision = firstFailure
  if (lineage.length > 0) packet.proof = { ...(packet.proof ?? {}), lineage }
  return decision
}

export function denialError (decision: Extract<Decision, { allow: false }>, from: string, to: string, signal: Packet['signal']): AmeshError {
  return new AccessDeniedError(`${decision.code}: ${decision.reason}; to allow it: ${grantCommandFor(from, to, signal)}`)
}

/** Receiver side: decide from the packet's proof and this host's own records. */
export function checkReceive (host: Host, acl: AclStore, packet: Packet, senderName: string | undefined): Denial | null {
  const target = host.nodes.get(packet.to)
  if (target === undefined) return { code: 'NOT_SERVED_HERE', reason: `node ${packet.to} is not served by this host` }
  let parent: string | null = null
  const path = packet.proof?.lineage ?? []
  if (path.length > 0) {
    try {
      parent = verifyLineagePath(path, packet.from)[0].parent
    } catch (err) {
      return { code: errorCode(err), reason: errorMessage(err) }
    }
  }
  const decision = decide({
    sender: { id: packet.from, name: senderName, parent },
    target: localParty(target),
    signal: packet.signal,
    zone: packet.scope.zone,
    grants: packet.proof?.grants,
    blocked: acl.isBlocked(target.record.id, packet.from),
    ...context(host, acl)
  })
  return decision.allow ? null : { code: decision.code, reason: decision.reason }
}
