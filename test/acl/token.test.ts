import { strict as assert } from 'node:assert'
import * as dagCbor from '@ipld/dag-cbor'
import {
  commandCovers, decodeToken, encodeToken, issueToken, MAX_TOKEN_BYTES, MSG_SEND_CMD, tokenId, verifyToken, verifyTokenSignature
} from '../../src/acl/token.js'
import { forged, flipWithin, grant, HOUR, makeKeys, NOW } from './fixtures.js'

describe('acl/token', () => {
  const keys = makeKeys()
  const bytes = grant(keys.target, keys, { pol: { signals: ['MESSAGE', 'HANDOFF'], zones: ['project'] }, nbf: NOW - HOUR })
  const token = decodeToken(bytes)

  it('token - issue, encode, decode round trip with every field', () => {
    assert.deepEqual(token.payload, {
      iss: keys.target.id,
      aud: keys.sender.id,
      sub: keys.target.id,
      cmd: MSG_SEND_CMD,
      pol: { signals: ['MESSAGE', 'HANDOFF'], zones: ['project'] },
      nonce: Uint8Array.from([1, 2, 3, 4]),
      exp: NOW + HOUR,
      nbf: NOW - HOUR
    })
    assert.equal(verifyTokenSignature(token), true)
  })

  it('token - encoding is deterministic; the id is a stable dag-cbor CID of the bytes', () => {
    assert.deepEqual(encodeToken(token), bytes)
    assert.equal(tokenId(bytes), tokenId(Uint8Array.from(bytes)))
    assert.match(tokenId(bytes), /^bafyrei[a-z2-7]+$/)
    assert.notEqual(tokenId(bytes), tokenId(grant(keys.target, keys)))
  })

  it('token - issue draws a fresh random nonce by default', () => {
    const a = issueToken(keys.target, { aud: keys.sender.id, sub: keys.target.id, exp: NOW })
    const b = issueToken(keys.target, { aud: keys.sender.id, sub: keys.target.id, exp: NOW })
    assert.equal(a.payload.nonce.length, 16)
    assert.notDeepEqual(a.payload.nonce, b.payload.nonce)
    assert.deepEqual(a.payload.pol, {})
  })

  it('token - a forged signature (another key signed the exact payload) does not verify', () => {
    assert.equal(verifyTokenSignature(decodeToken(forged(token.payload, keys.stranger))), false)
  })

  it('token - a tampered signature byte does not verify', () => {
    assert.equal(verifyTokenSignature(decodeToken(flipWithin(bytes, token.sig))), false)
    assert.throws(() => verifyToken(flipWithin(bytes, token.sig)), { name: 'TokenSignatureError' })
    assert.deepEqual(verifyToken(bytes), token)
  })

  const p = token.payload
  const malformed: Array<{ name: string, bytes: () => Uint8Array, error?: string }> = [
    { name: 'over 8 KiB', bytes: () => new Uint8Array(MAX_TOKEN_BYTES + 1), error: 'TokenTooLargeError' },
    { name: 'garbage', bytes: () => Uint8Array.from([0x9f, 0xff, 0x00]) },
    { name: 'not a map', bytes: () => dagCbor.encode('token') },
    { name: 'extra top-level field', bytes: () => dagCbor.encode({ ...token, extra: true }) },
    { name: 'extra payload field', bytes: () => dagCbor.encode({ payload: { ...p, meta: 'x' }, sig: token.sig }) },
    { name: 'missing exp', bytes: () => dagCbor.encode({ payload: withoutExp(), sig: token.sig }) },
    { name: 'float exp', bytes: () => dagCbor.encode({ payload: { ...p, exp: 1.5 }, sig: token.sig }) },
    { name: 'aud not a node id', bytes: () => dagCbor.encode({ payload: { ...p, aud: 'worker-1' }, sig: token.sig }) },
    { name: 'unknown signal', bytes: () => dagCbor.encode({ payload: { ...p, pol: { signals: ['SHOUT'] } }, sig: token.sig }) },
    { name: 'unknown zone', bytes: () => dagCbor.encode({ payload: { ...p, pol: { zones: ['moon'] } }, sig: token.sig }) },
    { name: 'unknown policy key', bytes: () => dagCbor.encode({ payload: { ...p, pol: { files: ['a'] } }, sig: token.sig }) },
    { name: 'duplicate signal', bytes: () => dagCbor.encode({ payload: { ...p, pol: { signals: ['MESSAGE', 'MESSAGE'] } }, sig: token.sig }) },
    { name: 'bad cmd', bytes: () => dagCbor.encode({ payload: { ...p, cmd: 'msg/send' }, sig: token.sig }) },
    { name: 'empty nonce', bytes: () => dagCbor.encode({ payload: { ...p, nonce: new Uint8Array() }, sig: token.sig }) },
    { name: 'short signature', bytes: () => dagCbor.encode({ payload: p, sig: token.sig.subarray(1) }) },
    { name: 'non-canonical key order', bytes: () => nonCanonical() }
  ]
  for (const { name, bytes: make, error } of malformed) {
    it(`token - decode rejects ${name}`, () => {
      assert.throws(() => decodeToken(make()), { name: error ?? 'TokenMalformedError' })
    })
  }

  function withoutExp (): Record<string, unknown> {
    const { exp, ...rest } = p
    assert.equal(typeof exp, 'number')
    return rest
  }

  /** {payload, sig} with "payload" first: valid CBOR, but not DAG-CBOR's canonical order. */
  function nonCanonical (): Uint8Array {
    const parts = [Uint8Array.from([0xa2]), dagCbor.encode('payload'), dagCbor.encode(dagCbor.decode<{ payload: unknown }>(bytes).payload), dagCbor.encode('sig'), dagCbor.encode(token.sig)]
    return Uint8Array.from(parts.flatMap((part) => [...part]))
  }

  it('token - issue rejects invalid fields with InvalidArgumentError', () => {
    assert.throws(() => issueToken(keys.target, { aud: 'bob', sub: keys.target.id, exp: NOW }), { name: 'InvalidArgumentError' })
    assert.throws(() => issueToken(keys.target, { aud: keys.sender.id, sub: keys.target.id, exp: -1 }), { name: 'InvalidArgumentError' })
    assert.throws(() => issueToken(keys.target, { aud: keys.sender.id, sub: keys.target.id, exp: NOW, cmd: '/msg/' }), { name: 'InvalidArgumentError' })
  })

  const covers: Array<[granted: string, wanted: string, expected: boolean]> = [
    ['/msg/send', '/msg/send', true],
    ['/msg', '/msg/send', true],
    ['/', '/msg/send', true],
    ['/msg/send', '/msg/send/urgent', true],
    ['/msg/sen', '/msg/send', false],
    ['/msg/send', '/msg', false],
    ['/card', '/msg/send', false]
  ]
  for (const [granted, wanted, expected] of covers) {
    it(`token - cmd ${granted} ${expected ? 'covers' : 'does not cover'} ${wanted}`, () => {
      assert.equal(commandCovers(granted, wanted), expected)
    })
  }
})
