// The access matrix: a node's optional profile. A profile only narrows what
// lineage and grants allow; an absent field means "no restriction".
import { SIGNALS, ZONES, type Signal, type Zone } from '../packet/types.js'
import { ProfileMalformedError, ProfileSignalError, ProfileZoneError } from './errors.js'

const MAX_ENTRIES = 1024
const MAX_ENTRY_LENGTH = 256
const PROFILE_KEYS = ['receives_from', 'sends_to', 'zone_access', 'signals'] as const

export interface Profile {
  /** node ids or names this node accepts packets from */
  readonly receives_from?: readonly string[]
  /** node ids or names this node may send to */
  readonly sends_to?: readonly string[]
  /** zones this node may send and receive in */
  readonly zone_access?: readonly Zone[]
  /** signals this node may send and receive */
  readonly signals?: readonly Signal[]
}

export interface NodeRef {
  readonly id: string
  readonly name?: string
}

/** What the access matrix looks at in a packet. */
export interface AccessFacts {
  readonly sender: NodeRef
  readonly target: NodeRef
  readonly signal: Signal
  readonly zone: Zone
}

export const PROFILE_CODES = ['PROFILE_SIGNAL', 'PROFILE_ZONE', 'PROFILE_SENDER', 'PROFILE_TARGET'] as const
export type ProfileCode = typeof PROFILE_CODES[number]

export interface ProfileDenial {
  readonly code: ProfileCode
  readonly reason: string
}

/** Check an untrusted profile (from a spec or config); throws a named error. */
export function validateProfile (value: unknown): Profile {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProfileMalformedError('profile must be an object')
  }
  const record = value as Record<string, unknown>
  const unknown = Object.keys(record).find((k) => !(PROFILE_KEYS as readonly string[]).includes(k))
  if (unknown !== undefined) throw new ProfileMalformedError(`profile: unknown field ${unknown} (expected ${PROFILE_KEYS.join(', ')})`)
  const profile: { -readonly [K in keyof Profile]: Profile[K] } = {}
  if (record.receives_from !== undefined) profile.receives_from = nodeList(record.receives_from, 'receives_from')
  if (record.sends_to !== undefined) profile.sends_to = nodeList(record.sends_to, 'sends_to')
  if (record.zone_access !== undefined) profile.zone_access = enumList(record.zone_access, ZONES, 'zone_access', ProfileZoneError)
  if (record.signals !== undefined) profile.signals = enumList(record.signals, SIGNALS, 'signals', ProfileSignalError)
  return profile
}

function stringList (value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_ENTRIES) {
    throw new ProfileMalformedError(`profile: ${field} must be a list of at most ${MAX_ENTRIES} strings`)
  }
  for (const item of value) {
    if (typeof item !== 'string' || item.length === 0 || item.length > MAX_ENTRY_LENGTH) {
      throw new ProfileMalformedError(`profile: ${field} entries must be non-empty strings`)
    }
  }
  return value as string[]
}

function nodeList (value: unknown, field: string): readonly string[] {
  return [...new Set(stringList(value, field))]
}

type NamedErrorClass = new (message: string) => Error

function enumList<T extends string> (value: unknown, allowed: readonly T[], field: string, Err: NamedErrorClass): readonly T[] {
  const out: T[] = []
  for (const item of stringList(value, field)) {
    const known = allowed.find((a) => a === item)
    if (known === undefined) throw new Err(`profile: ${field} names unknown ${item} (known: ${allowed.join(', ')})`)
    if (!out.includes(known)) out.push(known)
  }
  return out
}

function names (node: NodeRef): string {
  return node.name !== undefined ? `${node.name} (${node.id})` : node.id
}

function listed (list: readonly string[] | undefined, node: NodeRef): boolean {
  return list === undefined || list.includes(node.id) || (node.name !== undefined && list.includes(node.name))
}

function allows<T> (list: readonly T[] | undefined, item: T): boolean {
  return list === undefined || list.includes(item)
}

/** The sender's own profile: may it send this? Null when allowed. */
export function checkSendProfile (profile: Profile | undefined, facts: AccessFacts): ProfileDenial | null {
  if (profile === undefined) return null
  const who = names(facts.sender)
  if (!allows(profile.signals, facts.signal)) return { code: 'PROFILE_SIGNAL', reason: `profile of ${who} does not allow sending signal ${facts.signal}` }
  if (!allows(profile.zone_access, facts.zone)) return { code: 'PROFILE_ZONE', reason: `profile of ${who} has no access to zone ${facts.zone}` }
  if (!listed(profile.sends_to, facts.target)) return { code: 'PROFILE_TARGET', reason: `profile of ${who} does not allow sending to ${names(facts.target)}` }
  return null
}

/** The receiver's profile: does it accept this? Null when allowed. */
export function checkReceiveProfile (profile: Profile | undefined, facts: AccessFacts): ProfileDenial | null {
  if (profile === undefined) return null
  const who = names(facts.target)
  if (!allows(profile.signals, facts.signal)) return { code: 'PROFILE_SIGNAL', reason: `profile of ${who} does not accept signal ${facts.signal}` }
  if (!allows(profile.zone_access, facts.zone)) return { code: 'PROFILE_ZONE', reason: `profile of ${who} has no access to zone ${facts.zone}` }
  if (!listed(profile.receives_from, facts.sender)) return { code: 'PROFILE_SENDER', reason: `profile of ${who} does not accept packets from ${names(facts.sender)}` }
  return null
}
