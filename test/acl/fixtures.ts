// Shared fixtures for the ACL tests: keys, a fixed clock, token builders.
import { generateNodeKey, type NodeKey } from '../../src/identity/node-key.js'
import { encodeToken, issueToken, TOKEN_DOMAIN, type TokenFields, type TokenPayload } from '../../src/acl/token.js'
import { encodeCbor, signedMessage } from '../../src/acl/codec.js'
import type { ChainContext } from '../../src/acl/chain.js'
import { TokenCache } from '../../src/acl/token-cache.js'

export const NOW = 1_700_000_000_000
export const HOUR = 60 * 60 * 1000

export interface Keys {
  target: NodeKey
  sender: NodeKey
  mid1: NodeKey
  mid2: NodeKey
  stranger: NodeKey
  ancestor: NodeKey
}

export function makeKeys (): Keys {
  return {
    target: generateNodeKey(),
    sender: generateNodeKey(),
    mid1: generateNodeKey(),
    mid2: generateNodeKey(),
    stranger: generateNodeKey(),
    ancestor: generateNodeKey()
  }
}

/** Encoded token from `key` with sensible defaults (sub = target, exp = NOW + 1h). */
export function grant (key: NodeKey, keys: Keys, fields: Partial<TokenFields> = {}): Uint8Array {
  return encodeToken(issueToken(key, {
    aud: keys.sender.id,
    sub: keys.target.id,
    exp: NOW + HOUR,
    nonce: Uint8Array.from([1, 2, 3, 4]),
    ...fields
  }))
}

/** Encoded token whose payload claims `payload.iss` but whose exact bytes are signed by `signer`. */
export function forged (payload: TokenPayload, signer: NodeKey): Uint8Array {
  return encodeToken({ payload, sig: signer.sign(signedMessage(TOKEN_DOMAIN, encodeCbor(payload))) })
}

/** A chain context for a send from keys.sender to keys.target, with a fresh cache. */
export function context (keys: Keys, overrides: Partial<ChainContext> = {}): ChainContext {
  return {
    sender: keys.sender.id,
    target: keys.target.id,
    signal: 'MESSAGE',
    zone: 'project',
    now: NOW,
    isRevoked: () => false,
    speaksFor: (issuer, sub) => issuer === sub || (sub === keys.target.id && issuer === keys.ancestor.id),
    cache: new TokenCache(),
    ...overrides
  }
}

/** A copy of `bytes` with one byte changed at `index` (negative counts from the end). */
export function flipByte (bytes: Uint8Array, index: number): Uint8Array {
  const out = Uint8Array.from(bytes)
  const i = index < 0 ? out.length + index : index
  out[i] ^= 0x01
  return out
}

/** A copy of `bytes` with the first byte of the (first) occurrence of `part` changed. */
export function flipWithin (bytes: Uint8Array, part: Uint8Array): Uint8Array {
  for (let i = 0; i + part.length <= bytes.length; i++) {
    if (part.every((b, j) => bytes[i + j] === b)) return flipByte(bytes, i)
  }
  throw new Error('part not found in bytes')
}
