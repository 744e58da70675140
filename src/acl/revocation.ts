// Revocation statements: a signed "token T is revoked" by an issuer in T's
// chain. Whether a statement applies to a token depends on the chain it is
// used in; which statements a host stores is decided in
// authz/revocation-policy.ts (only those that can apply to a chain it has).
import { verifyByNodeId, type NodeKey } from '../identity/node-key.js'
import { InvalidArgumentError } from '../util/errors.js'
import { decodeCanonical, encodeCbor, hasKeys, isNodeIdString, isRecord, isTimestamp, signedMessage } from './codec.js'
import { RevocationMalformedError, RevocationSignatureError } from './errors.js'
import type { ChainLink } from './chain.js'

export const REVOCATION_DOMAIN = 'amesh/revocation/1'
export const MAX_REVOCATION_BYTES = 2048
const MAX_TOKEN_ID_LENGTH = 128
const TOKEN_ID_PATTERN = /^b[a-z2-7]+$/

export interface Revocation {
  /** node id of the signer */
  readonly revoker: string
  /** id (CID string) of the revoked token */
  readonly token: string
  /** issued at, ms since the epoch */
  readonly iat: number
}

export interface SignedRevocation {
  readonly revocation: Revocation
  readonly sig: Uint8Array
}

export function issueRevocation (key: NodeKey, tokenId: string, now: number = Date.now()): SignedRevocation {
  if (!isTokenId(tokenId)) throw new InvalidArgumentError(`revocation: not a token id: ${tokenId}`)
  const revocation: Revocation = { revoker: key.id, token: tokenId, iat: now }
  return { revocation, sig: key.sign(revocationMessage(revocation)) }
}

function isTokenId (value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_TOKEN_ID_LENGTH && TOKEN_ID_PATTERN.test(value)
}

function revocationRecord (r: Revocation): Record<string, unknown> {
  return { revoker: r.revoker, token: r.token, iat: r.iat }
}

function revocationMessage (r: Revocation): Uint8Array {
  return signedMessage(REVOCATION_DOMAIN, encodeCbor(revocationRecord(r)))
}

export function encodeRevocation (signed: SignedRevocation): Uint8Array {
  return encodeCbor({ revocation: revocationRecord(signed.revocation), sig: signed.sig })
}

/** Parse (bounded, canonical, shape-checked) without checking the signature. */
export function decodeRevocation (bytes: Uint8Array): SignedRevocation {
  const value = decodeCanonical(bytes, MAX_REVOCATION_BYTES, RevocationMalformedError, 'revocation')
  if (!hasKeys(value, ['revocation', 'sig']) || !(value.sig instanceof Uint8Array) || value.sig.length !== 64) {
    throw new RevocationMalformedError('revocation: expected {revocation, sig} with a 64-byte signature')
  }
  const r = value.revocation
  if (!isRecord(r) || !hasKeys(r, ['revoker', 'token', 'iat'])) {
    throw new RevocationMalformedError('revocation: expected {revoker, token, iat}')
  }
  if (!isNodeIdString(r.revoker)) throw new RevocationMalformedError('revocation: revoker is not a node id')
  if (!isTokenId(r.token)) throw new RevocationMalformedError('revocation: token is not a token id')
  if (!isTimestamp(r.iat)) throw new RevocationMalformedError('revocation: iat must be a timestamp in ms')
  return { revocation: { revoker: r.revoker, token: r.token, iat: r.iat }, sig: value.sig }
}

/** Decode and check the revoker's signature; returns the statement or throws a named error. */
export function verifyRevocation (bytes: Uint8Array): Revocation {
  const { revocation, sig } = decodeRevocation(bytes)
  if (!verifyByNodeId(revocation.revoker, revocationMessage(revocation), sig)) {
    throw new RevocationSignatureError('revocation not signed by the named revoker')
  }
  return revocation
}

/**
 * True when a verified revocation applies to a token in `chain` (root first):
 * the revoked token is in the chain, and the revoker is the issuer of that
 * link or of a link above it — or, when `speaksFor` is given, an ancestor
 * that speaks for the root issuer.
 */
export function revocationApplies (
  rev: Revocation,
  chain: readonly ChainLink[],
  speaksFor?: (issuerId: string, subId: string) => boolean
): boolean {
  const index = chain.findIndex((link) => link.id === rev.token)
  if (index < 0) return false
  const issuers = chain.slice(0, index + 1).map((link) => link.token.payload.iss)
  return revokerCounts(rev.revoker, issuers, speaksFor)
}

/**
 * The rule behind `revocationApplies`, for `ChainContext.isRevoked`: a
 * revoker counts when it is one of `issuers` (the revoked link's issuer and
 * those above it), or speaks for the root issuer.
 */
export function revokerCounts (
  revoker: string,
  issuers: readonly string[],
  speaksFor?: (issuerId: string, subId: string) => boolean
): boolean {
  if (issuers.includes(revoker)) return true
  return speaksFor !== undefined && issuers.length > 0 && speaksFor(revoker, issuers[0])
}
