// JWS with a detached payload (RFC 7515 §5.2, Appendix F), as A2A card
// signatures use it: the payload is the RFC 8785 canonical JSON of the value.

import { verifyByNodeId, type NodeKey } from '../identity/node-key.js'
import { canonicalBytes, type JsonObject } from './canonical-json.js'
import { isRecord } from './card-shape.js'
import type { JwsSignature } from './card-types.js'

const JWS_ALG = 'EdDSA'
const JWS_TYP = 'JOSE'
const B64URL = /^[A-Za-z0-9_-]+$/

export function b64url (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url')
}

function signingInput (protectedB64: string, payloadB64: string): Uint8Array {
  return new TextEncoder().encode(protectedB64 + '.' + payloadB64)
}

/**
 * Sign the canonical JSON of `payload` with `key`. The result is a JWS whose
 * payload is detached: re-attach BASE64URL(canonical payload) to verify it
 * with any JOSE library.
 */
export function signDetached (payload: JsonObject, key: NodeKey): JwsSignature {
  const header = { alg: JWS_ALG, typ: JWS_TYP, kid: key.id }
  const protectedB64 = b64url(canonicalBytes(header))
  const signature = key.sign(signingInput(protectedB64, b64url(canonicalBytes(payload))))
  return { protected: protectedB64, signature: b64url(signature) }
}

/** True when some signature has kid = nodeId and verifies under its key. */
export function verifyDetached (payload: JsonObject, signatures: readonly JwsSignature[], nodeId: string): boolean {
  const payloadB64 = b64url(canonicalBytes(payload))
  return signatures.some((sig) => B64URL.test(sig.protected) && B64URL.test(sig.signature) &&
    headerNamesSigner(sig.protected, nodeId) &&
    verifyByNodeId(nodeId, signingInput(sig.protected, payloadB64), new Uint8Array(Buffer.from(sig.signature, 'base64url'))))
}

function headerNamesSigner (protectedB64: string, nodeId: string): boolean {
  let header: unknown
  try {
    header = JSON.parse(Buffer.from(protectedB64, 'base64url').toString('utf8'))
  } catch {
    return false
  }
  if (!isRecord(header)) return false
  // an unknown `crit` extension must make the signature unusable (RFC 7515 §4.1.11)
  return header.alg === JWS_ALG && header.kid === nodeId && header.crit === undefined &&
    (header.typ === undefined || header.typ === JWS_TYP)
}
