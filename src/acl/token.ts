// Capability tokens shaped after UCAN 1.0 delegation: {payload, sig}, where
// payload = {iss, aud, sub, cmd, pol, nonce, exp, nbf?}, DAG-CBOR encoded,
// signed by `iss` (Ed25519). A token's id is the CID of its encoded bytes.
import { randomBytes } from 'node:crypto'
import { verifyByNodeId, type NodeKey } from '../identity/node-key.js'
import { SIGNALS, ZONES, type Signal, type Zone } from '../packet/types.js'
import { InvalidArgumentError } from '../util/errors.js'
import { cidOf, decodeCanonical, encodeCbor, hasKeys, isNodeIdString, isRecord, isTimestamp, signedMessage, type CborRecord } from './codec.js'
import { TokenMalformedError, TokenSignatureError, TokenTooLargeError } from './errors.js'

export const TOKEN_DOMAIN = 'amesh/token/1'
export const MAX_TOKEN_BYTES = 8 * 1024
export const MSG_SEND_CMD = '/msg/send'
const NONCE_BYTES = 16
const MAX_NONCE_BYTES = 64
const MAX_CMD_LENGTH = 256
const CMD_SEGMENT = /^[a-z0-9_.-]+$/

/** The closed policy language: an absent list means "any". */
export interface TokenPolicy {
  readonly signals?: readonly Signal[]
  readonly zones?: readonly Zone[]
}

export interface TokenPayload {
  readonly iss: string
  readonly aud: string
  readonly sub: string
  readonly cmd: string
  readonly pol: TokenPolicy
  readonly nonce: Uint8Array
  /** expiry, ms since the epoch (exclusive) */
  readonly exp: number
  /** not before, ms since the epoch (inclusive) */
  readonly nbf?: number
}

export interface Token {
  readonly payload: TokenPayload
  readonly sig: Uint8Array
}

export interface TokenFields {
  aud: string
  sub: string
  /** default `/msg/send` */
  cmd?: string
  pol?: TokenPolicy
  exp: number
  nbf?: number
  /** default: 16 random bytes */
  nonce?: Uint8Array
}

let signatureChecks = 0

/** How many token signatures have been checked in this process (for tests and metrics). */
export function tokenSignatureChecks (): number {
  return signatureChecks
}

export function issueToken (key: NodeKey, fields: TokenFields): Token {
  const payload = parsePayload(buildPayload(key.id, fields), InvalidArgumentError)
  return { payload, sig: key.sign(tokenMessage(payload)) }
}

function buildPayload (iss: string, fields: TokenFields): CborRecord {
  const payload: CborRecord = {
    iss,
    aud: fields.aud,
    sub: fields.sub,
    cmd: fields.cmd ?? MSG_SEND_CMD,
    pol: fields.pol ?? {},
    nonce: fields.nonce ?? new Uint8Array(randomBytes(NONCE_BYTES)),
    exp: fields.exp
  }
  if (fields.nbf !== undefined) payload.nbf = fields.nbf
  return payload
}

function tokenMessage (payload: TokenPayload): Uint8Array {
  return signedMessage(TOKEN_DOMAIN, encodeCbor(payloadRecord(payload)))
}

function payloadRecord (p: TokenPayload): CborRecord {
  const pol: CborRecord = {}
  if (p.pol.signals !== undefined) pol.signals = [...p.pol.signals]
  if (p.pol.zones !== undefined) pol.zones = [...p.pol.zones]
  const out: CborRecord = { iss: p.iss, aud: p.aud, sub: p.sub, cmd: p.cmd, pol, nonce: p.nonce, exp: p.exp }
  if (p.nbf !== undefined) out.nbf = p.nbf
  return out
}

export function encodeToken (token: Token): Uint8Array {
  return encodeCbor({ payload: payloadRecord(token.payload), sig: token.sig })
}

/** Parse a token (bounded to 8 KiB, canonical, shape-checked) without checking its signature. */
export function decodeToken (bytes: Uint8Array): Token {
  if (bytes instanceof Uint8Array && bytes.length > MAX_TOKEN_BYTES) {
    throw new TokenTooLargeError(`token: ${bytes.length} bytes exceeds the ${MAX_TOKEN_BYTES}-byte limit`)
  }
  const value = decodeCanonical(bytes, MAX_TOKEN_BYTES, TokenMalformedError, 'token')
  if (!hasKeys(value, ['payload', 'sig']) || !(value.sig instanceof Uint8Array) || value.sig.length !== 64) {
    throw new TokenMalformedError('token: expected {payload, sig} with a 64-byte signature')
  }
  return { payload: parsePayload(value.payload, TokenMalformedError), sig: value.sig }
}

/** The token id: CIDv1 (dag-cbor, sha2-256) of the encoded token bytes. */
export function tokenId (bytes: Uint8Array): string {
  return cidOf(bytes)
}

/** True when the token's signature verifies against its issuer's key. */
export function verifyTokenSignature (token: Token): boolean {
  signatureChecks++
  return verifyByNodeId(token.payload.iss, tokenMessage(token.payload), token.sig)
}

/** Decode and check the signature; returns the token or throws a named error. */
export function verifyToken (bytes: Uint8Array): Token {
  const token = decodeToken(bytes)
  if (!verifyTokenSignature(token)) throw new TokenSignatureError('token not signed by its issuer')
  return token
}

type ErrorClass = new (message: string) => Error

function parsePayload (value: unknown, Err: ErrorClass): TokenPayload {
  if (!isRecord(value) || !hasKeys(value, ['iss', 'aud', 'sub', 'cmd', 'pol', 'nonce', 'exp'], ['nbf'])) {
    throw new Err('token: payload must be {iss, aud, sub, cmd, pol, nonce, exp, nbf?}')
  }
  const { iss, aud, sub, cmd, nonce, exp, nbf } = value
  for (const [field, id] of [['iss', iss], ['aud', aud], ['sub', sub]] as const) {
    if (!isNodeIdString(id)) throw new Err(`token: ${field} is not a node id`)
  }
  if (!isCommand(cmd)) throw new Err('token: cmd must be a path such as /msg/send')
  if (!(nonce instanceof Uint8Array) || nonce.length === 0 || nonce.length > MAX_NONCE_BYTES) {
    throw new Err(`token: nonce must be 1..${MAX_NONCE_BYTES} bytes`)
  }
  if (!isTimestamp(exp)) throw new Err('token: exp must be a timestamp in ms')
  if (nbf !== undefined && !isTimestamp(nbf)) throw new Err('token: nbf must be a timestamp in ms')
  const payload = { iss: iss as string, aud: aud as string, sub: sub as string, cmd, pol: parsePolicy(value.pol, Err), nonce, exp }
  return nbf === undefined ? payload : { ...payload, nbf }
}

function parsePolicy (value: unknown, Err: ErrorClass): TokenPolicy {
  if (!isRecord(value) || !hasKeys(value, [], ['signals', 'zones'])) {
    throw new Err('token: pol must be {signals?, zones?}')
  }
  const pol: { signals?: readonly Signal[], zones?: readonly Zone[] } = {}
  if (value.signals !== undefined) pol.signals = parseList(value.signals, SIGNALS, 'signal', Err)
  if (value.zones !== undefined) pol.zones = parseList(value.zones, ZONES, 'zone', Err)
  return pol
}

function parseList<T extends string> (value: unknown, allowed: readonly T[], what: string, Err: ErrorClass): readonly T[] {
  if (!Array.isArray(value)) throw new Err(`token: pol.${what}s must be a list`)
  const out: T[] = []
  for (const item of value) {
    const known = allowed.find((a) => a === item)
    if (known === undefined) throw new Err(`token: unknown ${what} ${String(item)}`)
    if (out.includes(known)) throw new Err(`token: duplicate ${what} ${known}`)
    out.push(known)
  }
  return out
}

export function isCommand (value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_CMD_LENGTH || !value.startsWith('/')) return false
  if (value === '/') return true
  return value.slice(1).split('/').every((segment) => CMD_SEGMENT.test(segment))
}

/** True when command path `granted` covers `wanted` (itself or a sub-path). */
export function commandCovers (granted: string, wanted: string): boolean {
  return granted === '/' || wanted === granted || wanted.startsWith(granted + '/')
}
