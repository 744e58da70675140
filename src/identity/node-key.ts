import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto'
import { base58btc } from 'multiformats/bases/base58'
import { InvalidArgumentError } from '../util/errors.js'

/** multicodec prefix for an Ed25519 public key (0xed, varint-encoded). */
const ED25519_PUB_PREFIX = Uint8Array.from([0xed, 0x01])
const DID_KEY_PREFIX = 'did:key:'

/** A node's Ed25519 key pair, backed by node:crypto. */
export interface NodeKey {
  readonly id: string
  readonly publicKey: Uint8Array
  sign: (data: Uint8Array) => Uint8Array
  /** PKCS#8 DER of the private key, for storage. */
  exportPrivate: () => Uint8Array
}

export function generateNodeKey (): NodeKey {
  const { privateKey } = generateKeyPairSync('ed25519')
  return nodeKeyFromPrivate(privateKey)
}

export function importNodeKey (pkcs8: Uint8Array): NodeKey {
  const privateKey = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' })
  return nodeKeyFromPrivate(privateKey)
}

function nodeKeyFromPrivate (privateKey: KeyObject): NodeKey {
  const publicKey = rawPublicKey(createPublicKey(privateKey))
  const id = nodeIdFromPublicKey(publicKey)
  const der = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }))
  return {
    id,
    publicKey,
    sign: (data) => new Uint8Array(sign(null, data, privateKey)),
    exportPrivate: () => der
  }
}

/** DER SubjectPublicKeyInfo of an Ed25519 key, up to the 32 key bytes (RFC 8410) */
const ED25519_SPKI_HEAD = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00])
const ED25519_KEY_BYTES = 32

/**
 * The raw 32-byte Ed25519 public key, sliced from its DER SPKI export. Not the
 * JWK export: on Node 20.20 a loop of key generation and JWK exports can
 * deadlock the main thread (ExportJWK -> GC -> ~KeyGenJob -> uv_mutex_lock).
 */
export function rawPublicKey (key: KeyObject): Uint8Array {
  const der = key.export({ format: 'der', type: 'spki' })
  const head = ED25519_SPKI_HEAD
  if (der.byteLength !== head.byteLength + ED25519_KEY_BYTES || !head.every((b, k) => der[k] === b)) {
    throw new InvalidArgumentError('not an Ed25519 key')
  }
  return new Uint8Array(der.subarray(head.byteLength))
}

/** did:key identifier of an Ed25519 public key (self-certifying node id). */
export function nodeIdFromPublicKey (publicKey: Uint8Array): string {
  const bytes = new Uint8Array(ED25519_PUB_PREFIX.length + publicKey.length)
  bytes.set(ED25519_PUB_PREFIX, 0)
  bytes.set(publicKey, ED25519_PUB_PREFIX.length)
  return DID_KEY_PREFIX + base58btc.encode(bytes)
}

/** The raw Ed25519 public key inside a did:key node id. */
export function publicKeyFromNodeId (id: string): Uint8Array {
  if (!id.startsWith(DID_KEY_PREFIX + 'z')) throw new InvalidArgumentError(`not a did:key node id: ${id}`)
  let bytes: Uint8Array
  try {
    bytes = base58btc.decode(id.slice(DID_KEY_PREFIX.length))
  } catch (err) {
    throw new InvalidArgumentError(`not a did:key node id: ${id}`, { cause: err })
  }
  if (bytes.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) {
    throw new InvalidArgumentError(`not an Ed25519 did:key: ${id}`)
  }
  return bytes.subarray(2)
}

const validIds = new Set<string>()
const VALID_IDS_MAX = 10_000

/** True for an Ed25519 did:key; valid ids are remembered (bounded) so a stream checks each once. */
export function isNodeId (value: string): boolean {
  if (validIds.has(value)) return true
  if (!value.startsWith(DID_KEY_PREFIX + 'z')) return false
  try {
    publicKeyFromNodeId(value)
  } catch {
    return false
  }
  if (validIds.size >= VALID_IDS_MAX) validIds.clear()
  validIds.add(value)
  return true
}

const keyCache = new Map<string, KeyObject>()
const KEY_CACHE_MAX = 10_000

function publicKeyObject (id: string): KeyObject {
  let key = keyCache.get(id)
  if (key === undefined) {
    const x = Buffer.from(publicKeyFromNodeId(id)).toString('base64url')
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' })
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear()
    keyCache.set(id, key)
  }
  return key
}

/** Verify an Ed25519 signature by the key a node id names. */
export function verifyByNodeId (id: string, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verify(null, data, publicKeyObject(id), signature)
  } catch {
    return false
  }
}
