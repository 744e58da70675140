// Lineage of managed nodes: the parent signs the child's certificate. For a
// node placed on another host the child's key is made there and only its id
// comes back; the parent's host signs, the placing host verifies.
import { checkDepthPolicy, encodeLineage, issueLineage, verifyLineage, verifyLineagePath, type LineageCert } from '../acl/index.js'
import { encodeLineagePath, lineagePathOf } from '../authz/lineage-path.js'
import type { LocalNode } from '../store/nodes.js'
import { InvalidArgumentError } from '../util/errors.js'
import * as cbor from '@ipld/dag-cbor'

export interface ChildLineage {
  depth: number
  /** the child's lineage path (own certificate first), as stored in its record */
  lineage: string
}

/** Sign a child's certificate under a local parent, after the depth policy (names policy.max_depth when refused). */
export function signChild (parent: LocalNode, childId: string, maxDepth: number): ChildLineage {
  checkDepthPolicy(parent.record.depth, maxDepth)
  const parentPath = lineagePathOf(parent.record)
  const parentCert: LineageCert | undefined = parentPath.length > 0 ? verifyLineage(parentPath[0]) : undefined
  const depth = parent.record.depth + 1
  const cert = encodeLineage(issueLineage(parent.key, childId, depth, parentCert))
  return { depth, lineage: encodeLineagePath([cert, ...parentPath]) }
}

/** Check a lineage path received for a child made here: it names the child and the expected parent. */
export function checkChildLineage (lineage: string, childId: string, parentId: string, maxDepth: number): ChildLineage {
  let path: Uint8Array[]
  try {
    path = cbor.decode<Uint8Array[]>(Buffer.from(lineage, 'base64'))
  } catch {
    throw new InvalidArgumentError('lineage: not a CBOR list of certificates')
  }
  if (!Array.isArray(path) || !path.every((b) => b instanceof Uint8Array)) throw new InvalidArgumentError('lineage: not a list of certificates')
  const certs = verifyLineagePath(path, childId)
  if (certs[0].parent !== parentId) throw new InvalidArgumentError(`lineage: signed by ${certs[0].parent}, not by the parent ${parentId}`)
  checkDepthPolicy(certs[0].depth - 1, maxDepth)
  return { depth: certs[0].depth, lineage }
}
