import { strict as assert } from 'node:assert'
import * as dagCbor from '@ipld/dag-cbor'
import { verifyChain, type ChainLink } from '../../src/acl/chain.js'
import {
  decodeRevocation, encodeRevocation, issueRevocation, MAX_REVOCATION_BYTES, revocationApplies, revokerCounts,
  verifyRevocation, type Revocation
} from '../../src/acl/revocation.js'
import { decodeToken, tokenId } from '../../src/acl/token.js'
import { context, flipWithin, grant, HOUR, makeKeys, NOW } from './fixtures.js'

describe('acl/revocation', () => {
  const keys = makeKeys()
  const chainBytes = [
    grant(keys.target, keys, { aud: keys.mid1.id, exp: NOW + 3 * HOUR }),
    grant(keys.mid1, keys, { aud: keys.mid2.id, exp: NOW + 2 * HOUR }),
    grant(keys.mid2, keys, { exp: NOW + HOUR })
  ]
  const links: ChainLink[] = chainBytes.map((b) => ({ id: tokenId(b), token: decodeToken(b) }))
  const [rootId, middleId, leafId] = links.map((l) => l.id)

  it('revocation - issue, encode, verify round trip', () => {
    const bytes = encodeRevocation(issueRevocation(keys.mid1, middleId, NOW))
    assert.deepEqual(verifyRevocation(bytes), { revoker: keys.mid1.id, token: middleId, iat: NOW })
    assert.deepEqual(encodeRevocation(decodeRevocation(bytes)), bytes)
  })

  const good = issueRevocation(keys.mid1, middleId, NOW)
  const rejections: Array<{ name: string, bytes: () => Uint8Array, error: string }> = [
    {
      name: 'a revoker that did not sign',
      bytes: () => encodeRevocation({ revocation: { ...good.revocation, revoker: keys.target.id }, sig: good.sig }),
      error: 'RevocationSignatureError'
    },
    { name: 'a tampered signature byte', bytes: () => flipWithin(encodeRevocation(good), good.sig), error: 'RevocationSignatureError' },
    {
      name: 'another token id under the same signature',
      bytes: () => encodeRevocation({ revocation: { ...good.revocation, token: rootId }, sig: good.sig }),
      error: 'RevocationSignatureError'
    },
    { name: 'garbage', bytes: () => Uint8Array.from([0xc0]), error: 'RevocationMalformedError' },
    { name: 'oversized', bytes: () => new Uint8Array(MAX_REVOCATION_BYTES + 1), error: 'RevocationMalformedError' },
    { name: 'a token id that is not a CID', bytes: () => dagCbor.encode({ revocation: { ...good.revocation, token: 'T1' }, sig: good.sig }), error: 'RevocationMalformedError' },
    { name: 'an extra field', bytes: () => dagCbor.encode({ ...good, why: 'x' }), error: 'RevocationMalformedError' }
  ]
  for (const { name, bytes, error } of rejections) {
    it(`revocation - rejects ${name} with ${error}`, () => {
      assert.throws(() => verifyRevocation(bytes()), { name: error })
    })
  }

  it('revocation - issue rejects a value that is not a token id', () => {
    assert.throws(() => issueRevocation(keys.target, 'not-a-cid'), { name: 'InvalidArgumentError' })
  })

  const applies: Array<{ name: string, rev: () => Revocation, expected: boolean, speaksFor?: boolean }> = [
    { name: 'the issuer of the revoked link', rev: () => rev(keys.mid1.id, middleId), expected: true },
    { name: 'the issuer of a link above', rev: () => rev(keys.target.id, leafId), expected: true },
    { name: 'the root issuer revoking the root', rev: () => rev(keys.target.id, rootId), expected: true },
    { name: 'the issuer of a link below', rev: () => rev(keys.mid2.id, middleId), expected: false },
    { name: 'the audience (sender) of the chain', rev: () => rev(keys.sender.id, leafId), expected: false },
    { name: 'a stranger', rev: () => rev(keys.stranger.id, rootId), expected: false },
    { name: 'a token not in the chain', rev: () => rev(keys.target.id, tokenId(grant(keys.target, keys))), expected: false },
    { name: 'an ancestor speaking for the root issuer', rev: () => rev(keys.ancestor.id, middleId), expected: true, speaksFor: true },
    { name: 'an ancestor when no speaksFor is given', rev: () => rev(keys.ancestor.id, middleId), expected: false }
  ]
  for (const { name, rev: make, expected, speaksFor } of applies) {
    it(`revocation - ${expected ? 'applies' : 'does not apply'} when signed by ${name}`, () => {
      const sf = speaksFor === true ? (a: string, b: string) => a === b || (a === keys.ancestor.id && b === keys.target.id) : undefined
      assert.equal(revocationApplies(make(), links, sf), expected)
    })
  }

  function rev (revoker: string, token: string): Revocation {
    return { revoker, token, iat: NOW }
  }

  it('revocation - a revoked parent link stops the chain; a revocation by a lower issuer does not', () => {
    const store: Revocation[] = []
    const isRevoked = (id: string, issuers: readonly string[]): boolean =>
      store.some((r) => r.token === id && revokerCounts(r.revoker, issuers))
    assert.ok(verifyChain(chainBytes, context(keys, { isRevoked })).ok)
    store.push(verifyRevocation(encodeRevocation(issueRevocation(keys.mid2, rootId))))
    assert.ok(verifyChain(chainBytes, context(keys, { isRevoked })).ok, 'mid2 may not revoke the root link')
    store.push(verifyRevocation(encodeRevocation(issueRevocation(keys.target, rootId))))
    const result = verifyChain(chainBytes, context(keys, { isRevoked }))
    assert.ok(!result.ok)
    assert.equal(result.code, 'TOKEN_REVOKED')
    assert.equal(result.index, 0)
  })
})
