// The access decision: one pure function over verified facts.
// Precedence: block → profiles → group (lineage) → grant chain → deny.
// A block can never be overridden, and the denial it produces is exactly the
// one the same sender would get with no group relation and no valid grant,
// so a blocked sender cannot tell a block from a missing grant.
import type { Signal, Zone } from '../packet/types.js'
import { verifyChain, type TokenReason } from './chain.js'
import { checkReceiveProfile, checkSendProfile, type AccessFacts, type Profile, type ProfileCode } from './profile.js'
import type { TokenCache } from './token-cache.js'

export type DenyCode = 'NO_GRANT' | ProfileCode | TokenReason

export type Decision =
  | { readonly allow: true, readonly via: 'group' | 'grant' }
  | { readonly allow: false, readonly code: DenyCode, readonly reason: string }

export interface Party {
  readonly id: string
  /** the name the caller resolved from a verified card; informational and for profile entries */
  readonly name?: string
  /** verified parent id (from a lineage certificate), or null for a root */
  readonly parent: string | null
  readonly profile?: Profile
}

export interface DecideInput {
  readonly sender: Party
  readonly target: Party
  readonly signal: Signal
  readonly zone: Zone
  /** the carried grant chain, encoded tokens root first */
  readonly grants?: readonly Uint8Array[]
  /** true when the target blocks the sender */
  readonly blocked: boolean
  readonly now: number
  readonly isRevoked: (tokenId: string, issuers: readonly string[]) => boolean
  readonly speaksFor: (issuerId: string, subId: string) => boolean
  readonly cache?: TokenCache
}

export function decide (input: DecideInput): Decision {
  const facts: AccessFacts = { sender: input.sender, target: input.target, signal: input.signal, zone: input.zone }
  const profileDenial = checkSendProfile(input.sender.profile, facts) ?? checkReceiveProfile(input.target.profile, facts)
  if (profileDenial !== null) return { allow: false, ...profileDenial }
  if (!input.blocked && sameGroup(input.sender, input.target)) return { allow: true, via: 'group' }
  return decideByGrant(input)
}

/**
 * True when the two nodes share a group: the same node, parent and child,
 * or siblings under one parent.
 */
export function sameGroup (a: Pick<Party, 'id' | 'parent'>, b: Pick<Party, 'id' | 'parent'>): boolean {
  if (a.id === b.id) return true
  if (a.parent === b.id || b.parent === a.id) return true
  return a.parent !== null && a.parent === b.parent
}

function decideByGrant (input: DecideInput): Decision {
  if (input.grants === undefined || input.grants.length === 0) return noGrant(input)
  const result = verifyChain(input.grants, {
    sender: input.sender.id,
    target: input.target.id,
    signal: input.signal,
    zone: input.zone,
    now: input.now,
    isRevoked: input.isRevoked,
    speaksFor: input.speaksFor,
    cache: input.cache
  })
  if (result.ok) return input.blocked ? noGrant(input) : { allow: true, via: 'grant' }
  return { allow: false, code: result.code, reason: `grant rejected: ${result.reason}` }
}

/** The denial for an ungranted sender; a block with a valid grant gives exactly this. */
function noGrant (input: DecideInput): Decision {
  return {
    allow: false,
    code: 'NO_GRANT',
    reason: `no grant: ${label(input.target)} has not granted ${label(input.sender)} signal ${input.signal}`
  }
}

function label (party: Party): string {
  return party.name ?? party.id
}

const SHELL_SAFE = /^[A-Za-z0-9._:@%+=,/-]+$/

function shellWord (word: string): string {
  return SHELL_SAFE.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}

/** The CLI command the target would run to allow this send. */
export function grantCommandFor (senderName: string, targetName: string, signal: Signal): string {
  return `amesh grant --as ${shellWord(targetName)} --to ${shellWord(senderName)} --signals ${signal}`
}
