// Lineage certificates: a parent signs that a node is its child, at a depth.
// Root nodes are depth 0 and carry no certificate; a direct child of a root
// is depth 1. Nothing here assumes a maximum depth: the live limit is a
// policy (`policy.max_depth`, default 1) checked when a child is started.
import { verifyByNodeId, type NodeKey } from '../identity/node-key.js'
import { InvalidArgumentError } from '../util/errors.js'
import { decodeCanonical, encodeCbor, hasKeys, isNodeIdString, isRecord, isTimestamp, signedMessage } from './codec.js'
import { DepthPolicyError, LineageMalformedError, LineagePathError, LineageSignatureError } from './errors.js'

export const LINEAGE_DOMAIN = 'amesh/lineage/1'
export const MAX_LINEAGE_BYTES = 2048
/** Default `policy.max_depth`: children of roots exist; a child may not have children. */
export const DEFAULT_MAX_DEPTH = 1

export interface LineageCert {
  /** the child node id */
  readonly child: string
  /** the parent node id (the signer) */
  readonly parent: string
  /** the child's depth: 1 for a child of a root */
  readonly depth: number
  /** issued at, ms since the epoch */
  readonly iat: number
}

export interface SignedLineage {
  readonly cert: LineageCert
  readonly sig: Uint8Array
}

/**
 * Sign a lineage certificate for `childId` at `depth`. When the parent's own
 * certificate is given, the depth must be one below it and the certificate
 * must be the parent's; without it the parent is taken to be a root (depth 1).
 */
export function issueLineage (parentKey: NodeKey, childId: string, depth: number, parentCert?: LineageCert, now: number = Date.now()): SignedLineage {
  checkIssueArgs(parentKey.id, childId, depth, parentCert)
  const cert: LineageCert = { child: childId, parent: parentKey.id, depth, iat: now }
  return { cert, sig: parentKey.sign(lineageMessage(cert)) }
}

function checkIssueArgs (parentId: string, childId: string, depth: number, parentCert?: LineageCert): void {
  if (!isNodeIdString(childId)) throw new InvalidArgumentError(`lineage: child is not a node id: ${childId}`)
  if (childId === parentId) throw new InvalidArgumentError('lineage: a node cannot be its own parent')
  if (!Number.isSafeInteger(depth) || depth < 1) throw new InvalidArgumentError(`lineage: depth must be an integer >= 1, got ${depth}`)
  const expected = parentCert === undefined ? 1 : parentCert.depth + 1
  if (depth !== expected) throw new InvalidArgumentError(`lineage: depth ${depth} does not follow the parent's depth (expected ${expected})`)
  if (parentCert !== undefined && parentCert.child !== parentId) {
    throw new InvalidArgumentError('lineage: the parent certificate is not the signing parent\'s')
  }
}

function lineageMessage (cert: LineageCert): Uint8Array {
  return signedMessage(LINEAGE_DOMAIN, encodeCbor(certRecord(cert)))
}

function certRecord (cert: LineageCert): Record<string, unknown> {
  return { child: cert.child, parent: cert.parent, depth: cert.depth, iat: cert.iat }
}

export function encodeLineage (signed: SignedLineage): Uint8Array {
  return encodeCbor({ cert: certRecord(signed.cert), sig: signed.sig })
}

/** Parse (bounded, canonical, shape-checked) without checking the signature. */
export function decodeLineage (bytes: Uint8Array): SignedLineage {
  const value = decodeCanonical(bytes, MAX_LINEAGE_BYTES, LineageMalformedError, 'lineage certificate')
  if (!hasKeys(value, ['cert', 'sig']) || !(value.sig instanceof Uint8Array) || value.sig.length !== 64) {
    throw new LineageMalformedError('lineage certificate: expected {cert, sig} with a 64-byte signature')
  }
  return { cert: parseCert(value.cert), sig: value.sig }
}

function parseCert (value: unknown): LineageCert {
  if (!isRecord(value) || !hasKeys(value, ['child', 'parent', 'depth', 'iat'])) {
    throw new LineageMalformedError('lineage certificate: expected {child, parent, depth, iat}')
  }
  const { child, parent, depth, iat } = value
  if (!isNodeIdString(child) || !isNodeIdString(parent) || child === parent) {
    throw new LineageMalformedError('lineage certificate: child and parent must be distinct node ids')
  }
  if (!isTimestamp(depth) || depth < 1) throw new LineageMalformedError('lineage certificate: depth must be an integer >= 1')
  if (!isTimestamp(iat)) throw new LineageMalformedError('lineage certificate: iat must be a timestamp in ms')
  return { child, parent, depth, iat }
}

/** Decode and check the signature; returns the certificate or throws a named error. */
export function verifyLineage (bytes: Uint8Array): LineageCert {
  const { cert, sig } = decodeLineage(bytes)
  if (!verifyByNodeId(cert.parent, lineageMessage(cert), sig)) {
    throw new LineageSignatureError('lineage certificate not signed by the claimed parent')
  }
  return cert
}

/**
 * Verify a path of certificates from a node up to a root: `path[0]` is the
 * node's own certificate, each next one its parent's, and the last one has
 * depth 1 (its parent is a root). Returns the verified certificates.
 */
export function verifyLineagePath (path: readonly Uint8Array[], nodeId?: string): LineageCert[] {
  const certs = path.map(verifyLineage)
  if (certs.length === 0) throw new LineagePathError('lineage path: empty')
  if (nodeId !== undefined && certs[0].child !== nodeId) {
    throw new LineagePathError(`lineage path: first certificate is for ${certs[0].child}, not ${nodeId}`)
  }
  for (let i = 0; i < certs.length; i++) checkPathStep(certs, i)
  return certs
}

function checkPathStep (certs: readonly LineageCert[], i: number): void {
  const cert = certs[i]
  const next = certs[i + 1]
  if (next === undefined) {
    if (cert.depth !== 1) throw new LineagePathError(`lineage path: ends at depth ${cert.depth}, not at a child of a root`)
    return
  }
  if (next.child !== cert.parent) throw new LineagePathError(`lineage path: link ${i + 1} is not the certificate of ${cert.parent}`)
  if (next.depth !== cert.depth - 1) throw new LineagePathError(`lineage path: depth ${next.depth} does not precede ${cert.depth}`)
}

/** Ancestor ids of the node a verified path starts at: parent first, root last. */
export function ancestorsOf (certs: readonly LineageCert[]): string[] {
  return certs.map((c) => c.parent)
}

/**
 * A `speaksFor(issuer, sub)` predicate from an ancestor lookup: true when the
 * issuer is the subject itself or one of its verified ancestors.
 */
export function speaksForFrom (ancestors: (id: string) => readonly string[]): (issuer: string, sub: string) => boolean {
  return (issuer, sub) => issuer === sub || ancestors(sub).includes(issuer)
}

/**
 * Throw DepthPolicyError when a node at `parentDepth` may not start a child
 * under `maxDepth` (the `policy.max_depth` config key, default 1).
 */
export function checkDepthPolicy (parentDepth: number, maxDepth: number = DEFAULT_MAX_DEPTH): void {
  const childDepth = parentDepth + 1
  if (childDepth <= maxDepth) return
  throw new DepthPolicyError(
    `a node at depth ${parentDepth} may not start children: policy.max_depth is ${maxDepth}; ` +
    `set policy.max_depth to ${childDepth} or more in the amesh config to allow it`
  )
}
