import * as cbor from '@ipld/dag-cbor'
import { ancestorsOf, verifyLineagePath } from '../acl/index.js'
import type { NodeRecord } from '../store/nodes.js'

/** A node's lineage path (its own certificate first, up to a child of a root), as stored in its record. */
export function lineagePathOf (record: NodeRecord): Uint8Array[] {
  if (record.lineage === undefined) return []
  return cbor.decode<Uint8Array[]>(Buffer.from(record.lineage, 'base64'))
}

export function encodeLineagePath (path: Uint8Array[]): string {
  return Buffer.from(cbor.encode(path)).toString('base64')
}

/** Verified ancestors of a local node (parent first); [] for a root. */
export function localAncestors (record: NodeRecord): string[] {
  const path = lineagePathOf(record)
  return path.length === 0 ? [] : ancestorsOf(verifyLineagePath(path, record.id))
}
