// Shared deterministic-encoding helpers for signed ACL records.
// Every record is DAG-CBOR; decoding is bounded and accepts only the
// canonical encoding (re-encoding must give the same bytes), so a record has
// exactly one byte form and therefore exactly one content id.
import { createHash } from 'node:crypto'
import * as dagCbor from '@ipld/dag-cbor'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { isNodeId } from '../identity/node-key.js'
import type { AclErrorClass } from './errors.js'

const SHA2_256 = 0x12
const textEncoder = new TextEncoder()

export type CborRecord = Record<string, unknown>

export function encodeCbor (value: unknown): Uint8Array {
  return dagCbor.encode(value)
}

/** Decode canonical DAG-CBOR of at most `maxBytes`, throwing `ErrorClass` otherwise. */
export function decodeCanonical (bytes: Uint8Array, maxBytes: number, ErrorClass: AclErrorClass, what: string): CborRecord {
  if (!(bytes instanceof Uint8Array)) throw new ErrorClass(`${what}: not bytes`)
  if (bytes.length > maxBytes) throw new ErrorClass(`${what}: ${bytes.length} bytes exceeds the ${maxBytes}-byte limit`)
  let value: unknown
  try {
    value = dagCbor.decode(bytes)
  } catch (err) {
    throw new ErrorClass(`${what}: not valid DAG-CBOR`, { cause: err })
  }
  if (!isRecord(value)) throw new ErrorClass(`${what}: not a map`)
  if (!bytesEqual(dagCbor.encode(value), bytes)) throw new ErrorClass(`${what}: not canonically encoded`)
  return value
}

export function isRecord (value: unknown): value is CborRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value) &&
    !(value instanceof Uint8Array) && Object.getPrototypeOf(value) === Object.prototype
}

/** True when `value` has all of `required`, and nothing outside `required` ∪ `optional`. */
export function hasKeys (value: CborRecord, required: readonly string[], optional: readonly string[] = []): boolean {
  const keys = Object.keys(value)
  if (!required.every((k) => keys.includes(k))) return false
  return keys.every((k) => required.includes(k) || optional.includes(k))
}

export function isTimestamp (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

export function isNodeIdString (value: unknown): value is string {
  return typeof value === 'string' && value.length <= 256 && isNodeId(value)
}

/** The bytes a signature covers: a domain tag, then the encoded payload. */
export function signedMessage (domain: string, payload: Uint8Array): Uint8Array {
  const tag = textEncoder.encode(domain + '\n')
  const out = new Uint8Array(tag.length + payload.length)
  out.set(tag, 0)
  out.set(payload, tag.length)
  return out
}

/** CIDv1 (dag-cbor codec, sha2-256) of encoded bytes, as a base32 string. */
const cidMemo = new Map<string, string>()
const CID_MEMO_MAX = 4096

/** CIDv1 (dag-cbor, sha2-256) of bytes; the string form is memoised by digest, so a steady stream of the same token hashes natively only. */
export function cidOf (bytes: Uint8Array): string {
  const digest = createHash('sha256').update(bytes).digest()
  const key = digest.toString('base64')
  let cid = cidMemo.get(key)
  if (cid === undefined) {
    cid = CID.createV1(dagCbor.code, Digest.create(SHA2_256, new Uint8Array(digest))).toString()
    if (cidMemo.size >= CID_MEMO_MAX) cidMemo.clear()
    cidMemo.set(key, cid)
  }
  return cid
}

export function bytesEqual (a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return false
  }
  return true
}
