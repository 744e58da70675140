import { strict as assert } from 'node:assert'
import { MAX_CHAIN_LINKS, TOKEN_REASONS, verifyChain, type ChainContext, type TokenReason } from '../../src/acl/chain.js'
import { decodeToken, MAX_TOKEN_BYTES, tokenId, tokenSignatureChecks } from '../../src/acl/token.js'
import { TokenCache } from '../../src/acl/token-cache.js'
import { context, flipWithin, forged, grant, HOUR, makeKeys, NOW, type Keys } from './fixtures.js'

const keys = makeKeys()

/** target → mid1 → mid2 → sender, each link narrower than the one above. */
function threeLinks (k: Keys = keys): Uint8Array[] {
  return [
    grant(k.target, k, { aud: k.mid1.id, cmd: '/msg', exp: NOW + 3 * HOUR }),
    grant(k.mid1, k, { aud: k.mid2.id, pol: { signals: ['MESSAGE', 'HANDOFF'], zones: ['project', 'personal'] }, exp: NOW + 2 * HOUR }),
    grant(k.mid2, k, { aud: k.sender.id, pol: { signals: ['MESSAGE'], zones: ['project'] }, exp: NOW + HOUR })
  ]
}

describe('acl/chain - accepted', () => {
  const accepted: Array<{ name: string, chain: () => Uint8Array[], ctx?: Partial<ChainContext> }> = [
    { name: 'a direct grant from the target', chain: () => [grant(keys.target, keys)] },
    { name: 'a delegation chain of 3 links that only narrows', chain: () => threeLinks() },
    { name: 'a root issued by an ancestor that speaks for the target', chain: () => [grant(keys.ancestor, keys)] },
    { name: 'a parent command covering /msg/send', chain: () => [grant(keys.target, keys, { cmd: '/msg' })] },
    { name: 'a link at exactly nbf', chain: () => [grant(keys.target, keys, { nbf: NOW })] },
    { name: 'the granted signal and zone', chain: () => [grant(keys.target, keys, { pol: { signals: ['SPAWN'], zones: ['kernel'] } })], ctx: { signal: 'SPAWN', zone: 'kernel' } }
  ]
  for (const { name, chain, ctx } of accepted) {
    it(`chain - accepts ${name}`, () => {
      const result = verifyChain(chain(), context(keys, ctx))
      assert.equal(result.ok, true, JSON.stringify(result))
    })
  }

  it('chain - the result carries the links and the earliest expiry', () => {
    const chain = threeLinks()
    const result = verifyChain(chain, context(keys))
    assert.ok(result.ok)
    assert.deepEqual(result.links.map((l) => l.id), chain.map(tokenId))
    assert.equal(result.exp, NOW + HOUR)
  })
})

interface Rejection {
  name: string
  code: TokenReason
  chain: () => Uint8Array[]
  ctx?: Partial<ChainContext>
  index?: number
}

const [root, middle, leaf] = threeLinks()
const rootPayload = decodeToken(root).payload

const rejections: Rejection[] = [
  { name: 'an empty chain', code: 'TOKEN_MALFORMED', chain: () => [] },
  { name: 'undecodable bytes', code: 'TOKEN_MALFORMED', chain: () => [Uint8Array.from([1, 2, 3])], index: 0 },
  { name: 'an oversized link', code: 'TOKEN_MALFORMED', chain: () => [root, new Uint8Array(MAX_TOKEN_BYTES + 1)], index: 1 },
  { name: 'a chain over the link limit', code: 'TOKEN_CHAIN_TOO_LONG', chain: () => new Array<Uint8Array>(MAX_CHAIN_LINKS + 1).fill(root) },
  { name: 'a wrong signer', code: 'TOKEN_SIGNATURE', chain: () => [forged(rootPayload, keys.stranger), middle, leaf], index: 0 },
  { name: 'a tampered signature byte', code: 'TOKEN_SIGNATURE', chain: () => [root, flipWithin(middle, decodeToken(middle).sig), leaf], index: 1 },
  { name: 'a tampered payload byte (nonce)', code: 'TOKEN_SIGNATURE', chain: () => [grantWithFlippedNonce()], index: 0 },
  { name: 'an expired link', code: 'TOKEN_EXPIRED', chain: () => [root, middle, leaf], ctx: { now: NOW + HOUR }, index: 2 },
  { name: 'a link at exactly exp', code: 'TOKEN_EXPIRED', chain: () => [grant(keys.target, keys, { exp: NOW })], index: 0 },
  { name: 'a link before nbf', code: 'TOKEN_NOT_YET_VALID', chain: () => [grant(keys.target, keys, { nbf: NOW + 1 })], index: 0 },
  {
    name: 'a revoked parent link (stops the child link)',
    code: 'TOKEN_REVOKED',
    chain: () => [root, middle, leaf],
    ctx: { isRevoked: (id) => id === tokenId(root) },
    index: 0
  },
  { name: 'a revoked leaf', code: 'TOKEN_REVOKED', chain: () => [root, middle, leaf], ctx: { isRevoked: (id) => id === tokenId(leaf) }, index: 2 },
  { name: 'a subject that is not the target', code: 'TOKEN_SUBJECT', chain: () => [grant(keys.stranger, keys, { sub: keys.stranger.id })], index: 0 },
  {
    name: 'links with different subjects',
    code: 'TOKEN_SUBJECT',
    chain: () => [grant(keys.target, keys, { aud: keys.mid1.id }), grant(keys.mid1, keys, { sub: keys.mid1.id })],
    index: 1
  },
  { name: 'a root issuer that does not speak for the target', code: 'TOKEN_ISSUER', chain: () => [grant(keys.stranger, keys)], index: 0 },
  { name: 'a broken chain (issuer is not the previous audience)', code: 'TOKEN_CHAIN_BROKEN', chain: () => [root, leaf], index: 1 },
  {
    name: 'widened signals',
    code: 'TOKEN_WIDENED',
    chain: () => [grant(keys.target, keys, { aud: keys.mid1.id, pol: { signals: ['MESSAGE'] } }), grant(keys.mid1, keys, { pol: { signals: ['MESSAGE', 'SPAWN'] } })],
    index: 1
  },
  {
    name: 'dropped signal list (any) under a restricted one',
    code: 'TOKEN_WIDENED',
    chain: () => [grant(keys.target, keys, { aud: keys.mid1.id, pol: { signals: ['MESSAGE'] } }), grant(keys.mid1, keys)],
    index: 1
  },
  {
    name: 'widened zones',
    code: 'TOKEN_WIDENED',
    chain: () => [grant(keys.target, keys, { aud: keys.mid1.id, pol: { zones: ['project'] } }), grant(keys.mid1, keys, { pol: { zones: ['project', 'kernel'] } })],
    index: 1
  },
  {
    name: 'a widened command',
    code: 'TOKEN_WIDENED',
    chain: () => [grant(keys.target, keys, { aud: keys.mid1.id, cmd: '/msg/send' }), grant(keys.mid1, keys, { cmd: '/msg' })],
    index: 1
  },
  {
    name: 'a later expiry than the delegating link',
    code: 'TOKEN_WIDENED',
    chain: () => [grant(keys.target, keys, { aud: keys.mid1.id, exp: NOW + HOUR }), grant(keys.mid1, keys, { exp: NOW + 2 * HOUR })],
    index: 1
  },
  { name: 'a final audience that is not the sender', code: 'TOKEN_AUDIENCE', chain: () => [grant(keys.target, keys, { aud: keys.stranger.id })], index: 0 },
  { name: 'the wrong audience after delegation', code: 'TOKEN_AUDIENCE', chain: () => [root, middle], index: 1 },
  { name: 'a command that does not cover /msg/send', code: 'TOKEN_COMMAND', chain: () => [grant(keys.target, keys, { cmd: '/card/read' })], index: 0 },
  { name: 'a signal not granted', code: 'TOKEN_SIGNAL', chain: () => [root, middle, leaf], ctx: { signal: 'HANDOFF' }, index: 2 },
  { name: 'a zone not granted', code: 'TOKEN_ZONE', chain: () => [root, middle, leaf], ctx: { zone: 'personal' }, index: 2 },
  { name: 'an empty signal list', code: 'TOKEN_SIGNAL', chain: () => [grant(keys.target, keys, { pol: { signals: [] } })], index: 0 }
]

function grantWithFlippedNonce (): Uint8Array {
  return flipWithin(grant(keys.target, keys), Uint8Array.from([1, 2, 3, 4]))
}

describe('acl/chain - rejected', () => {
  for (const { name, code, chain, ctx, index } of rejections) {
    it(`chain - rejects ${name} with ${code}`, () => {
      const result = verifyChain(chain(), context(keys, ctx))
      assert.equal(result.ok, false)
      assert.ok(!result.ok)
      assert.equal(result.code, code, result.reason)
      assert.equal(result.index, index)
      assert.ok(result.reason.length > 0)
    })
  }

  it('chain - every reason code has a rejection case', () => {
    assert.deepEqual(new Set(rejections.map((r) => r.code)), new Set(TOKEN_REASONS))
  })

  it('chain - the same bytes with another context are rejected for the other sender', () => {
    const result = verifyChain([grant(keys.target, keys)], context(keys, { sender: keys.mid1.id }))
    assert.ok(!result.ok)
    assert.equal(result.code, 'TOKEN_AUDIENCE')
  })
})

describe('acl/chain - verified-token cache', () => {
  it('cache - a cache hit does not re-verify a signature', () => {
    const cache = new TokenCache()
    const chain = threeLinks()
    const before = tokenSignatureChecks()
    assert.ok(verifyChain(chain, context(keys, { cache })).ok)
    assert.equal(tokenSignatureChecks() - before, 3)
    for (let i = 0; i < 100; i++) assert.ok(verifyChain(chain, context(keys, { cache })).ok)
    assert.equal(tokenSignatureChecks() - before, 3)
    assert.equal(cache.size, 3)
  })

  it('cache - time and revocation are still checked on a hit', () => {
    const cache = new TokenCache()
    const chain = threeLinks()
    assert.ok(verifyChain(chain, context(keys, { cache })).ok)
    const before = tokenSignatureChecks()
    const expired = verifyChain(chain, context(keys, { cache, now: NOW + 2 * HOUR }))
    assert.ok(!expired.ok && expired.code === 'TOKEN_EXPIRED')
    const revoked = verifyChain(chain, context(keys, { cache, isRevoked: (id) => id === tokenId(chain[1]) }))
    assert.ok(!revoked.ok && revoked.code === 'TOKEN_REVOKED')
    assert.equal(tokenSignatureChecks(), before)
  })

  it('cache - a failed signature is not cached and is checked again', () => {
    const cache = new TokenCache()
    const bad = [forged(rootPayload, keys.stranger)]
    const before = tokenSignatureChecks()
    verifyChain(bad, context(keys, { cache }))
    verifyChain(bad, context(keys, { cache }))
    assert.equal(tokenSignatureChecks() - before, 2)
    assert.equal(cache.size, 0)
  })

  it('cache - bounded, evicting the least recently used', () => {
    const cache = new TokenCache(2)
    const [a, b, c] = threeLinks().map(decodeToken)
    cache.set('a', a)
    cache.set('b', b)
    assert.equal(cache.get('a'), a)
    cache.set('c', c)
    assert.equal(cache.size, 2)
    assert.equal(cache.get('b'), undefined)
    assert.equal(cache.get('a'), a)
    assert.equal(cache.get('c'), c)
  })
})
