import { strict as assert } from 'node:assert'
import * as dagCbor from '@ipld/dag-cbor'
import { generateNodeKey, type NodeKey } from '../../src/identity/node-key.js'
import {
  ancestorsOf, checkDepthPolicy, LINEAGE_DOMAIN, decodeLineage, DEFAULT_MAX_DEPTH, encodeLineage, issueLineage,
  MAX_LINEAGE_BYTES, speaksForFrom, verifyLineage, verifyLineagePath, type LineageCert
} from '../../src/acl/lineage.js'
import { encodeCbor, signedMessage } from '../../src/acl/codec.js'
import { flipWithin, NOW } from './fixtures.js'

interface Tree {
  keys: NodeKey[]
  /** encoded certificate of keys[i] (i >= 1), signed by keys[i - 1] */
  certs: Uint8Array[]
}

/** A straight line of `levels` nodes below a root: root → n1 → n2 → … */
function lineTree (levels: number): Tree {
  const keys = [generateNodeKey()]
  const certs: Uint8Array[] = [new Uint8Array()]
  let parentCert: LineageCert | undefined
  for (let depth = 1; depth <= levels; depth++) {
    const child = generateNodeKey()
    const signed = issueLineage(keys[depth - 1], child.id, depth, parentCert, NOW + depth)
    keys.push(child)
    certs.push(encodeLineage(signed))
    parentCert = signed.cert
  }
  return { keys, certs }
}

/** Certificates from node `i` up to the root's child: [cert(i), cert(i-1), …, cert(1)]. */
function pathOf (tree: Tree, i: number): Uint8Array[] {
  return tree.certs.slice(1, i + 1).reverse()
}

describe('acl/lineage', () => {
  const tree = lineTree(4)

  it('lineage - issue, encode, verify round trip', () => {
    const cert = verifyLineage(tree.certs[1])
    assert.deepEqual(cert, { child: tree.keys[1].id, parent: tree.keys[0].id, depth: 1, iat: NOW + 1 })
  })

  it('lineage - encoding is deterministic and canonical', () => {
    const decoded = decodeLineage(tree.certs[2])
    assert.deepEqual(encodeLineage(decoded), tree.certs[2])
  })

  it('lineage - a 4-level tree verifies at every depth', () => {
    for (let i = 1; i <= 4; i++) {
      const certs = verifyLineagePath(pathOf(tree, i), tree.keys[i].id)
      assert.equal(certs[0].depth, i)
      assert.deepEqual(ancestorsOf(certs), tree.keys.slice(0, i).map((k) => k.id).reverse())
    }
  })

  it('lineage - speaksFor covers the node and every ancestor, never a descendant', () => {
    const ancestors = new Map(tree.keys.map((k, i) => [k.id, i === 0 ? [] : ancestorsOf(verifyLineagePath(pathOf(tree, i)))]))
    const speaksFor = speaksForFrom((id) => ancestors.get(id) ?? [])
    const [root, n1, , n3, n4] = tree.keys
    assert.equal(speaksFor(n4.id, n4.id), true)
    assert.equal(speaksFor(root.id, n4.id), true)
    assert.equal(speaksFor(n1.id, n4.id), true)
    assert.equal(speaksFor(n3.id, n4.id), true)
    assert.equal(speaksFor(n4.id, n3.id), false)
    assert.equal(speaksFor(generateNodeKey().id, n4.id), false)
  })

  it('lineage - a child may be issued at any depth when the parent certificate follows', () => {
    const deep = lineTree(7)
    assert.equal(verifyLineagePath(pathOf(deep, 7)).length, 7)
  })

  const stranger = generateNodeKey()
  const good = decodeLineage(tree.certs[2])
  const rejections: Array<{ name: string, bytes: () => Uint8Array, error: string }> = [
    {
      name: 'wrong signer (claims a parent that did not sign)',
      bytes: () => encodeLineage({ cert: good.cert, sig: stranger.sign(signedMessage(LINEAGE_DOMAIN, encodeCbor(good.cert))) }),
      error: 'LineageSignatureError'
    },
    {
      name: 'signature of another certificate',
      bytes: () => encodeLineage({ cert: { ...good.cert, iat: good.cert.iat + 1 }, sig: good.sig }),
      error: 'LineageSignatureError'
    },
    { name: 'tampered signature byte', bytes: () => flipWithin(tree.certs[2], good.sig), error: 'LineageSignatureError' },
    { name: 'garbage', bytes: () => Uint8Array.from([0xff, 0x00, 0x13]), error: 'LineageMalformedError' },
    { name: 'oversized', bytes: () => new Uint8Array(MAX_LINEAGE_BYTES + 1), error: 'LineageMalformedError' },
    { name: 'extra field', bytes: () => dagCbor.encode({ ...good, extra: 1 }), error: 'LineageMalformedError' },
    { name: 'depth 0', bytes: () => encodeLineage({ cert: { ...good.cert, depth: 0 }, sig: good.sig }), error: 'LineageMalformedError' },
    { name: 'own parent', bytes: () => encodeLineage({ cert: { ...good.cert, parent: good.cert.child }, sig: good.sig }), error: 'LineageMalformedError' },
    { name: 'short signature', bytes: () => encodeLineage({ cert: good.cert, sig: good.sig.subarray(0, 32) }), error: 'LineageMalformedError' },
    { name: 'not a map', bytes: () => dagCbor.encode([1, 2]), error: 'LineageMalformedError' }
  ]
  for (const { name, bytes, error } of rejections) {
    it(`lineage - rejects ${name} with ${error}`, () => {
      assert.throws(() => verifyLineage(bytes()), { name: error })
    })
  }

  const pathRejections: Array<{ name: string, path: () => Uint8Array[], nodeId?: () => string }> = [
    { name: 'empty path', path: () => [] },
    { name: 'gap in the path', path: () => [tree.certs[4], tree.certs[2], tree.certs[1]] },
    { name: 'wrong order', path: () => [tree.certs[1], tree.certs[2]] },
    { name: 'path not reaching a root', path: () => [tree.certs[4], tree.certs[3]] },
    { name: 'path of another node', path: () => pathOf(tree, 3), nodeId: () => tree.keys[4].id }
  ]
  for (const { name, path, nodeId } of pathRejections) {
    it(`lineage - path rejects ${name}`, () => {
      assert.throws(() => verifyLineagePath(path(), nodeId?.()), { name: 'LineagePathError' })
    })
  }

  it('lineage - issue rejects a depth that does not follow the parent', () => {
    const parentCert = verifyLineage(tree.certs[2])
    assert.throws(() => issueLineage(tree.keys[2], stranger.id, 2, parentCert), { name: 'InvalidArgumentError' })
    assert.throws(() => issueLineage(tree.keys[0], stranger.id, 2), { name: 'InvalidArgumentError' })
    assert.throws(() => issueLineage(tree.keys[1], stranger.id, 3, parentCert), { name: 'InvalidArgumentError' })
    assert.throws(() => issueLineage(tree.keys[0], 'worker-1', 1), { name: 'InvalidArgumentError' })
  })
})

describe('acl/lineage depth policy', () => {
  it('depth policy - default allows roots to start children, not children', () => {
    assert.equal(DEFAULT_MAX_DEPTH, 1)
    assert.doesNotThrow(() => checkDepthPolicy(0))
    assert.throws(() => checkDepthPolicy(1), (err: Error) => {
      assert.equal(err.name, 'DepthPolicyError')
      assert.match(err.message, /policy\.max_depth is 1/)
      assert.match(err.message, /set policy\.max_depth to 2/)
      return true
    })
  })

  const table: Array<[parentDepth: number, maxDepth: number, allowed: boolean]> = [
    [0, 1, true], [1, 1, false], [1, 2, true], [2, 2, false], [2, 3, true], [3, 3, false], [3, 4, true], [9, 10, true], [0, 0, false]
  ]
  for (const [parentDepth, maxDepth, allowed] of table) {
    it(`depth policy - parent depth ${parentDepth}, max ${maxDepth}: ${allowed ? 'allowed' : 'DepthPolicyError'}`, () => {
      if (allowed) assert.doesNotThrow(() => checkDepthPolicy(parentDepth, maxDepth))
      else assert.throws(() => checkDepthPolicy(parentDepth, maxDepth), { name: 'DepthPolicyError' })
    })
  }
})
