// amesh's records in its own Kademlia DHT (`/amesh/kad/1.0.0`):
//
//   /amesh-card/<nodeId>  the node's signed AgentCard (canonical JSON bytes)
//   /amesh-name/<name>    a name record: a set of name claims, each signed by
//                         the node that claims the name
//
// kad-dht picks a validator and a selector by the first key segment. The
// validators reject anything not signed by the key the record names, expired,
// dated in the future, oversized or not in canonical form; the selectors keep
// the newest card, and the name record that knows the most live claims.
// See docs/DISCOVERY.md for why names are claim sets.

import type { SelectFn, Selectors, ValidateFn, Validators } from '@libp2p/kad-dht'
import { isNodeId, type NodeKey } from '../identity/node-key.js'
import { AmeshError } from '../util/errors.js'
import { canonicalize } from './canonical-json.js'
import { NODE_NAME_PATTERN, isExpired, signDetached, verifyCard, verifyDetached, type JwsSignature, type SignedAgentCard, type VerifiedCard } from './card.js'

export const CARD_KEY_TYPE = 'amesh-card'
export const NAME_KEY_TYPE = 'amesh-name'
/** Bound on a card record's bytes, checked before anything is parsed. */
export const MAX_CARD_RECORD_BYTES = 16 * 1024
/** Bound on a name record's bytes, checked before anything is parsed. */
export const MAX_NAME_RECORD_BYTES = 32 * 1024
/** Bound on the claims one name record holds. */
export const MAX_NAME_CLAIMS = 16
/** How far in the future an issuedAt may lie (clock skew between hosts). */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000

export class RecordInvalidError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) {
    super('RECORD_INVALID', message, options)
    this.name = 'RecordInvalidError'
  }
}

export class RecordKeyMismatchError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) {
    super('RECORD_KEY_MISMATCH', message, options)
    this.name = 'RecordKeyMismatchError'
  }
}

export class RecordExpiredError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) {
    super('RECORD_EXPIRED', message, options)
    this.name = 'RecordExpiredError'
  }
}

// ---- keys -----------------------------------------------------------------

export type ParsedKey = { type: 'card', nodeId: string } | { type: 'name', name: string }

/** DHT key of a node's card: `/amesh-card/<nodeId>`. */
export function recordKey (nodeId: string): Uint8Array {
  if (!isNodeId(nodeId)) throw new RecordInvalidError(`not a node id: ${nodeId}`)
  return utf8(`/${CARD_KEY_TYPE}/${nodeId}`)
}

/** DHT key of a name record: `/amesh-name/<name>`. */
export function nameKey (name: string): Uint8Array {
  if (!NODE_NAME_PATTERN.test(name)) throw new RecordInvalidError(`invalid node name: ${JSON.stringify(name)}`)
  return utf8(`/${NAME_KEY_TYPE}/${name}`)
}

/** Which record a DHT key names; throws RecordInvalidError for foreign keys. */
export function parseKey (key: Uint8Array): ParsedKey {
  const parts = new TextDecoder().decode(key).split('/')
  if (parts.length === 3 && parts[0] === '') {
    const [, type, id] = parts
    if (type === CARD_KEY_TYPE && isNodeId(id)) return { type: 'card', nodeId: id }
    if (type === NAME_KEY_TYPE && NODE_NAME_PATTERN.test(id)) return { type: 'name', name: id }
  }
  throw new RecordInvalidError('not an amesh record key')
}

// ---- card records -----------------------------------------------------------

/** Record value of a signed card: UTF-8 of its canonical JSON. */
export function encodeCardRecord (card: SignedAgentCard): Uint8Array {
  return utf8(canonicalize(card))
}

/** Parse and verify a card record (bounded, canonical); expiry is not checked here. */
export function decodeCardRecord (bytes: Uint8Array): VerifiedCard {
  return verifyCard(parseCanonical(bytes, MAX_CARD_RECORD_BYTES, 'card'))
}

/** Verify a card record against the key it is stored under, at time `now`. */
export function validateCardRecord (key: Uint8Array, value: Uint8Array, now: number = Date.now()): VerifiedCard {
  const parsed = parseKey(key)
  if (parsed.type !== 'card') throw new RecordInvalidError('not a card record key')
  const vc = decodeCardRecord(value)
  if (vc.nodeId !== parsed.nodeId) throw new RecordKeyMismatchError(`record key names ${parsed.nodeId}, card is signed by ${vc.nodeId}`)
  checkTimes(vc, now, `card of ${vc.nodeId}`)
  return vc
}

function checkTimes (t: { issuedAt: number, expiresAt: number }, now: number, what: string): void {
  if (isExpired(t, now)) throw new RecordExpiredError(`${what} expired at ${new Date(t.expiresAt).toISOString()}`)
  if (t.issuedAt > now + MAX_CLOCK_SKEW_MS) throw new RecordInvalidError(`${what} is issued in the future`)
}

// ---- name claims ------------------------------------------------------------

/** "node `nodeId`, served by host `hostPeerId`, goes by `name`". */
export interface NameClaim {
  name: string
  nodeId: string
  hostPeerId: string
  issuedAt: number
  expiresAt: number
}

/** A claim with the claiming node's JWS signatures (same scheme as cards). */
export interface SignedNameClaim extends NameClaim {
  signatures: JwsSignature[]
}

/** Sign a name claim with the claiming node's key. */
export function signNameClaim (claim: NameClaim, key: NodeKey): SignedNameClaim {
  const body = claimBody(claim)
  if (key.id !== body.nodeId) throw new RecordKeyMismatchError(`key ${key.id} cannot claim a name for ${body.nodeId}`)
  return { ...body, signatures: [signDetached({ ...body }, key)] }
}

/** Check a claim's shape and its signature by the node it names. */
export function verifyNameClaim (value: unknown): SignedNameClaim {
  const body = claimBody(value)
  const sigs = isObject(value) ? value.signatures : undefined
  if (!Array.isArray(sigs) || sigs.length === 0 || sigs.length > 4 || !sigs.every(isSignature)) {
    throw new RecordInvalidError('name claim: signatures missing or malformed')
  }
  if (!verifyDetached({ ...body }, sigs, body.nodeId)) throw new RecordInvalidError(`name claim not signed by ${body.nodeId}`)
  return { ...body, signatures: sigs }
}

/** Bytes of one signed claim (canonical JSON), e.g. for gossip. */
export function encodeNameClaim (claim: SignedNameClaim): Uint8Array {
  return utf8(canonicalize(claim))
}

/** Parse and verify one signed claim. */
export function decodeNameClaim (bytes: Uint8Array): SignedNameClaim {
  return verifyNameClaim(parseCanonical(bytes, MAX_NAME_RECORD_BYTES, 'name claim'))
}

const CLAIM_FIELDS = new Set(['name', 'nodeId', 'hostPeerId', 'issuedAt', 'expiresAt', 'signatures'])

function claimBody (value: unknown): NameClaim {
  if (!isObject(value)) throw new RecordInvalidError('name claim must be an object')
  // every field but the signatures is signed: nothing unsigned may ride along
  if (!Object.keys(value).every((k) => CLAIM_FIELDS.has(k))) throw new RecordInvalidError('name claim: unknown field')
  const { name, nodeId, hostPeerId, issuedAt, expiresAt } = value
  if (typeof name !== 'string' || !NODE_NAME_PATTERN.test(name)) throw new RecordInvalidError('name claim: invalid name')
  if (typeof nodeId !== 'string' || !isNodeId(nodeId)) throw new RecordInvalidError('name claim: invalid nodeId')
  if (typeof hostPeerId !== 'string' || hostPeerId.length === 0 || hostPeerId.length > 256) throw new RecordInvalidError('name claim: invalid hostPeerId')
  if (!isTime(issuedAt) || !isTime(expiresAt) || expiresAt <= issuedAt) throw new RecordInvalidError('name claim: invalid issuedAt/expiresAt')
  return { name, nodeId, hostPeerId, issuedAt, expiresAt }
}

// ---- name records: a set of claims -----------------------------------------

/** Record value under `/amesh-name/<name>`: claims sorted by nodeId, one per node. */
export function encodeNameRecord (claims: readonly SignedNameClaim[]): Uint8Array {
  const sorted = [...claims].sort((a, b) => compare(a.nodeId, b.nodeId))
  if (sorted.length === 0 || sorted.length > MAX_NAME_CLAIMS) throw new RecordInvalidError(`a name record holds 1..${MAX_NAME_CLAIMS} claims`)
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].nodeId === sorted[i - 1].nodeId) throw new RecordInvalidError(`two claims by ${sorted[i].nodeId}`)
  }
  return utf8(canonicalize({ claims: sorted }))
}

/** Parse and verify a name record (every claim signed, one per node, same name). */
export function decodeNameRecord (bytes: Uint8Array): SignedNameClaim[] {
  const value = parseCanonical(bytes, MAX_NAME_RECORD_BYTES, 'name record')
  const raw = isObject(value) ? value.claims : undefined
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_NAME_CLAIMS) {
    throw new RecordInvalidError(`name record must hold 1..${MAX_NAME_CLAIMS} claims`)
  }
  const claims = raw.map(verifyNameClaim)
  for (let i = 1; i < claims.length; i++) {
    if (compare(claims[i - 1].nodeId, claims[i].nodeId) >= 0) throw new RecordInvalidError('name record claims must be sorted by nodeId, one per node')
    if (claims[i].name !== claims[0].name) throw new RecordInvalidError('name record mixes names')
  }
  return claims
}

/** Verify a name record against its key at time `now`; returns its live claims. */
export function validateNameRecord (key: Uint8Array, value: Uint8Array, now: number = Date.now()): SignedNameClaim[] {
  const parsed = parseKey(key)
  if (parsed.type !== 'name') throw new RecordInvalidError('not a name record key')
  const claims = decodeNameRecord(value)
  if (claims[0].name !== parsed.name) throw new RecordKeyMismatchError(`record key names ${parsed.name}, claims name ${claims[0].name}`)
  for (const c of claims) {
    if (c.issuedAt > now + MAX_CLOCK_SKEW_MS) throw new RecordInvalidError(`claim by ${c.nodeId} is issued in the future`)
  }
  const live = claims.filter((c) => !isExpired(c, now))
  if (live.length === 0) throw new RecordExpiredError(`every claim on ${parsed.name} has expired`)
  return live
}

/**
 * Merge name records seen for one name (from several peers, plus a node's
 * own new claim): valid, unexpired claims only, the newest per node, at most
 * MAX_NAME_CLAIMS (newest kept). Invalid inputs are skipped. Publishers put
 * the merged set back; resolvers read collisions from it.
 */
export function mergeNameClaims (name: string, records: Iterable<Uint8Array>, extra: readonly SignedNameClaim[] = [], now: number = Date.now()): SignedNameClaim[] {
  const key = nameKey(name)
  const byNode = new Map<string, SignedNameClaim>()
  const consider = (c: SignedNameClaim): void => {
    const seen = byNode.get(c.nodeId)
    if (c.name === name && !isExpired(c, now) && c.issuedAt <= now + MAX_CLOCK_SKEW_MS && (seen === undefined || c.issuedAt > seen.issuedAt)) byNode.set(c.nodeId, c)
  }
  for (const bytes of records) {
    try {
      validateNameRecord(key, bytes, now).forEach(consider)
    } catch {
      // a record that does not validate contributes nothing
    }
  }
  extra.map(verifyNameClaim).forEach(consider)
  return [...byNode.values()].sort((a, b) => b.issuedAt - a.issuedAt).slice(0, MAX_NAME_CLAIMS)
}

export interface NameResolution {
  /** distinct live node ids claiming the name, newest claim first */
  nodeIds: string[]
  claims: SignedNameClaim[]
  /** two or more different nodes claim the name */
  collision: boolean
}

/** Resolve a name from every record value a DHT query saw for `/amesh-name/<name>`. */
export function resolveName (name: string, records: Iterable<Uint8Array>, now: number = Date.now()): NameResolution {
  const claims = mergeNameClaims(name, records, [], now)
  return { nodeIds: claims.map((c) => c.nodeId), claims, collision: claims.length > 1 }
}

// ---- kad-dht validators and selectors --------------------------------------

/** kad-dht validators for amesh records; `now` is injectable for tests. */
export function createAmeshValidators (now: () => number = Date.now): Validators {
  const card: ValidateFn = async (key, value) => { validateCardRecord(key, value, now()) }
  const name: ValidateFn = async (key, value) => { validateNameRecord(key, value, now()) }
  return { [CARD_KEY_TYPE]: card, [NAME_KEY_TYPE]: name }
}

/** kad-dht selectors for amesh records; `now` is injectable for tests. */
export function createAmeshSelectors (now: () => number = Date.now): Selectors {
  const card: SelectFn = (key, records) => selectBest(records, (v) => {
    const vc = validateCardRecord(key, v, now())
    return [vc.issuedAt, vc.expiresAt]
  })
  const name: SelectFn = (key, records) => selectBest(records, (v) => {
    const live = validateNameRecord(key, v, now())
    return [live.length, Math.max(...live.map((c) => c.issuedAt))]
  })
  return { [CARD_KEY_TYPE]: card, [NAME_KEY_TYPE]: name }
}

export const ameshValidators: Validators = createAmeshValidators()
export const ameshSelectors: Selectors = createAmeshSelectors()

/**
 * Index of the best record by score (compared element-wise, higher wins);
 * invalid records lose to any valid one; exact ties go to the greater bytes so
 * every peer picks the same record and corrections do not flap.
 */
function selectBest (records: Uint8Array[], score: (value: Uint8Array) => number[]): number {
  let best = 0
  let bestScore: number[] | undefined
  records.forEach((value, i) => {
    let s: number[] | undefined
    try {
      s = score(value)
    } catch {
      return
    }
    const order = bestScore === undefined ? 1 : compareScores(s, bestScore)
    if (order > 0 || (order === 0 && compareBytes(value, records[best]) > 0)) {
      best = i
      bestScore = s
    }
  })
  return best
}

function compareScores (a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] > b[i] ? 1 : -1
  }
  return 0
}

function compareBytes (a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b)
}

// ---- helpers ------------------------------------------------------------------

function utf8 (text: string): Uint8Array {
  return new TextEncoder().encode(text)
}

function compare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isTime (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function isSignature (value: unknown): value is JwsSignature {
  return isObject(value) && Object.keys(value).length === 2 &&
    typeof value.protected === 'string' && typeof value.signature === 'string' &&
    value.protected.length <= 4096 && value.signature.length <= 4096
}

/** Decode bounded UTF-8 JSON that must already be in canonical form. */
function parseCanonical (bytes: Uint8Array, max: number, what: string): unknown {
  if (bytes.length > max) throw new RecordInvalidError(`${what} is ${bytes.length} bytes, more than ${max}`)
  let text: string
  let value: unknown
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    value = JSON.parse(text)
  } catch (err) {
    throw new RecordInvalidError(`${what} is not UTF-8 JSON`, { cause: err })
  }
  let canonical: string
  try {
    canonical = canonicalize(value)
  } catch (err) {
    throw new RecordInvalidError(`${what} is not canonicalisable JSON`, { cause: err })
  }
  if (canonical !== text) throw new RecordInvalidError(`${what} is not in canonical form`)
  return value
}
