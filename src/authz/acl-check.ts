import { chainExpiry, decide, denialHint, revokerCounts, speaksForFrom, verifyLineagePath, type Decision, type Party } from '../acl/index.js'
import type { VerifiedCard } from '../discovery/card.js'
import type { Denial } from '../delivery/receiver.js'
import type { Packet, Proof } from '../packet/types.js'
import type { LocalNode, NodeStore } from '../store/nodes.js'
import { AccessDeniedError, errorCode, errorMessage, type AmeshError } from '../util/errors.js'
import type { Target } from '../routing/resolve.js'
import type { AclStore } from './acl-store.js'
import { keyOf, recordingLookup, type DecisionCache, type NodeDeps } from './decision-cache.js'
import { lineagePathOf, localAncestors } from './lineage-path.js'

/** A cached sender-side allow: the decision, the proof it attached, and the remote card it was decided against. */
export interface SendAllow { decision: Decision, proof?: Proof, card?: VerifiedCard }
export type SendCache = DecisionCache<SendAllow>
export type ReceiveCache = DecisionCache<true>
/** The local nodes the decision reads (parties, ancestors, profiles). */
export type NodeLookup = Pick<NodeStore, 'get'>

function profileOf (node: LocalNode): Party['profile'] {
  return node.record.profile as Party['profile']
}

function localParty (node: LocalNode): Party {
  return { id: node.record.id, name: node.record.name, parent: node.record.parent ?? null, profile: profileOf(node) }
}

/** The facts both sides feed to `decide`, apart from the parties; every local node read is recorded in `deps`. */
function context (nodes: NodeLookup, acl: AclStore, now: number, deps: NodeDeps): Pick<Parameters<typeof decide>[0], 'now' | 'isRevoked' | 'speaksFor'> {
  const lookup = recordingLookup((id) => nodes.get(id), deps)
  const ancestors = (id: string): string[] => {
    const node = lookup(id)
    if (node === undefined) return []
    try { return localAncestors(node.record) } catch { return [] }
  }
  const speaksFor = speaksForFrom(ancestors)
  return {
    now,
    speaksFor,
    isRevoked: (tokenId, issuers) => acl.revocationsOf(tokenId).some((r) => revokerCounts(r.revoker, issuers, speaksFor))
  }
}

/** Sender side: attach proof (lineage path, a held grant chain) and fail fast with the receiver's reason. */
export function checkSend (nodes: NodeLookup, acl: AclStore, packet: Packet, from: LocalNode, target: Target, cache?: SendCache): Decision {
  const key = cache?.keys.of(from.record.id, target.id, packet.signal, packet.scope.zone) ?? keyOf(from.record.id, target.id, packet.signal, packet.scope.zone)
  const now = Date.now()
  const card = target.kind === 'remote' ? target.card : undefined
  const hit = cache?.get(key, acl.generation, now, [])
  if (hit !== undefined && hit.card === card) {
    if (hit.proof !== undefined) packet.proof = { ...(packet.proof ?? {}), ...hit.proof }
    return hit.decision
  }
  const gen = acl.generation
  // a local node and an a2a node are both records of this host: the same facts decide (the a2a node grants, blocks, has a profile)
  const deps: NodeDeps = new Map([[from.record.id, from], [target.id, target.kind === 'remote' ? undefined : target.node]])
  const { decision, expires } = decideSend(nodes, acl, packet, from, target, now, deps)
  if (decision.allow && cache !== undefined) {
    cache.set(key, { gen, now, expires, deps, proof: [], value: { decision, proof: packet.proof, card } })
  }
  return decision
}

function decideSend (nodes: NodeLookup, acl: AclStore, packet: Packet, from: LocalNode, target: Target, now: number, deps: NodeDeps): { decision: Decision, expires?: number } {
  const lineage = lineagePathOf(from.record)
  const targetParty = targetPartyOf(target)
  const base = {
    sender: localParty(from),
    target: targetParty,
    signal: packet.signal,
    zone: packet.scope.zone,
    blocked: target.kind !== 'remote' && acl.isBlocked(target.id, from.record.id),
    ...context(nodes, acl, now, deps)
  }
  let decision = decide(base)
  let expires: number | undefined
  let firstFailure: Decision | undefined
  for (const held of acl.heldFor(from.record.id, target.id)) {
    if (decision.allow) break
    const withGrant = decide({ ...base, grants: held.chain })
    if (withGrant.allow) { decision = withGrant; expires = held.exp; packet.proof = { ...(packet.proof ?? {}), grants: held.chain } }
    firstFailure ??= withGrant
  }
  // a held grant that no longer works says why (revoked, expired, signal not granted)
  if (!decision.allow && firstFailure !== undefined && !base.blocked) decision = firstFailure
  if (lineage.length > 0) packet.proof = { ...(packet.proof ?? {}), lineage }
  return { decision, expires }
}

function targetPartyOf (target: Target): Party {
  return target.kind === 'remote' ? { id: target.id, name: target.name, parent: target.card.parent ?? null } : localParty(target.node)
}

/** A send denial with the command that fixes it and the host to run it on. */
export function denialError (decision: Extract<Decision, { allow: false }>, packet: Packet, from: LocalNode, target: Target): AmeshError {
  const hint = denialHint(decision.code, {
    sender: localParty(from),
    target: targetPartyOf(target),
    signal: packet.signal,
    zone: packet.scope.zone,
    targetHost: target.kind === 'remote' ? target.host : undefined
  })
  return new AccessDeniedError(`${decision.code}: ${decision.reason}${hint === undefined ? '' : `; ${hint}`}`)
}

/** Receiver side: decide from the packet's proof and this host's own records (`target`: the local node it is for). */
export function checkReceive (nodes: NodeLookup, acl: AclStore, packet: Packet, target: LocalNode, senderName: string | undefined, cache?: ReceiveCache): Denial | null {
  const key = cache?.keys.of(packet.from, packet.to, packet.signal, packet.scope.zone, senderName ?? '') ?? keyOf(packet.from, packet.to, packet.signal, packet.scope.zone, senderName ?? '')
  const now = Date.now()
  const proof = [packet.proof?.lineage, packet.proof?.grants]
  if (cache?.get(key, acl.generation, now, proof) === true) return null
  const gen = acl.generation
  const deps: NodeDeps = new Map([[packet.to, target]])
  const decision = decideReceive(nodes, acl, packet, senderName, target, now, deps)
  if (!decision.allow) return { code: decision.code, reason: decision.reason }
  const expires = decision.via === 'grant' ? chainExpiry(packet.proof?.grants ?? []) : undefined
  if (cache !== undefined && (decision.via === 'group' || expires !== undefined)) cache.set(key, { gen, now, expires, deps, proof, value: true })
  return null
}

/** A decision, or a lineage failure (named by its error's code). */
type Outcome = Decision | { readonly allow: false, readonly code: string, readonly reason: string }

function decideReceive (nodes: NodeLookup, acl: AclStore, packet: Packet, senderName: string | undefined, target: LocalNode, now: number, deps: NodeDeps): Outcome {
  let parent: string | null = null
  const path = packet.proof?.lineage ?? []
  if (path.length > 0) {
    try {
      parent = verifyLineagePath(path, packet.from)[0].parent
    } catch (err) {
      return { allow: false, code: errorCode(err), reason: errorMessage(err) }
    }
  }
  return decide({
    sender: { id: packet.from, name: senderName, parent },
    target: localParty(target),
    signal: packet.signal,
    zone: packet.scope.zone,
    grants: packet.proof?.grants,
    blocked: acl.isBlocked(target.record.id, packet.from),
    ...context(nodes, acl, now, deps)
  })
}
