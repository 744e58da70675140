import { strict as assert } from 'node:assert'
import { flattenedVerify, importJWK } from 'jose'
import { generateNodeKey, type NodeKey } from '../../src/identity/node-key.js'
import { canonicalize } from '../../src/discovery/canonical-json.js'
import {
  AMESH_BINDING_URI, NODE_EXTENSION_URI, buildCard, isExpired, signCard, verifyCard,
  type AgentCard, type CardInfo, type SignedAgentCard
} from '../../src/discovery/card.js'

const NOW = 1_700_000_000_000
const HOUR = 60 * 60 * 1000
const HOST = '12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq'

function info (key: NodeKey, extra: Partial<CardInfo> = {}): CardInfo {
  return {
    nodeId: key.id,
    name: 'worker-1',
    kind: 'external',
    hostPeerId: HOST,
    hostAddrs: ['/ip4/127.0.0.1/tcp/4001'],
    issuedAt: NOW,
    expiresAt: NOW + HOUR,
    ...extra
  }
}

function clone<T> (value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

function flipFirstByte (b64: string): string {
  const bytes = Buffer.from(b64, 'base64url')
  bytes[0] ^= 0x01
  return bytes.toString('base64url')
}

function withoutSignatures (card: SignedAgentCard): AgentCard {
  const { signatures, ...rest } = card
  assert.ok(signatures.length > 0)
  return rest
}

describe('discovery/card', () => {
  const key = generateNodeKey()
  const other = generateNodeKey()

  it('card - has every required A2A v1.0 field and no ad-hoc top-level field', () => {
    const card = buildCard(info(key))
    assert.deepEqual(Object.keys(card).sort(), ['capabilities', 'defaultInputModes', 'defaultOutputModes', 'description', 'name', 'skills', 'supportedInterfaces', 'version'])
    assert.equal(card.name, 'worker-1')
    assert.equal(typeof card.description, 'string')
    assert.equal(card.version, '1.0.0')
    assert.deepEqual(card.supportedInterfaces, [{ url: `libp2p://${HOST}/${key.id}`, protocolBinding: AMESH_BINDING_URI, protocolVersion: '1.0' }])
    assert.equal(card.capabilities.streaming, true)
    assert.equal(card.capabilities.pushNotifications, false)
    assert.deepEqual(card.defaultInputModes, ['text/plain', 'application/json'])
    assert.deepEqual(card.defaultOutputModes, ['text/plain', 'application/json'])
    assert.equal(card.skills.length, 1)
    assert.deepEqual(Object.keys(card.skills[0]).sort(), ['description', 'id', 'name', 'tags'])
    assert.equal(card.skills[0].id, 'message')
  })

  it('card - the node extension carries identity, host, lineage, key and validity', () => {
    const parent = generateNodeKey()
    const card = buildCard(info(key, { kind: 'managed', parent: parent.id }))
    assert.equal(card.capabilities.extensions.length, 1)
    const ext = card.capabilities.extensions[0]
    assert.equal(ext.uri, NODE_EXTENSION_URI)
    assert.equal(ext.required, true)
    assert.equal(typeof ext.description, 'string')
    assert.deepEqual(ext.params, {
      nodeId: key.id,
      kind: 'managed',
      hostPeerId: HOST,
      hostAddrs: ['/ip4/127.0.0.1/tcp/4001'],
      parent: parent.id,
      publicKey: Buffer.from(key.publicKey).toString('base64url'),
      issuedAt: NOW,
      expiresAt: NOW + HOUR
    })
    assert.equal('parent' in buildCard(info(key)).capabilities.extensions[0].params, false)
  })

  it('card - custom skills, description and version are kept', () => {
    const skills = [{ id: 'review', name: 'Review', description: 'reviews code', tags: ['code'] }]
    const card = buildCard(info(key, { skills, description: 'a reviewer', version: '2.3.4' }))
    assert.deepEqual(card.skills, skills)
    assert.equal(card.description, 'a reviewer')
    assert.equal(card.version, '2.3.4')
  })

  it('card - buildCard rejects bad input with a named error', () => {
    for (const extra of [{ name: 'a/b' }, { name: '' }, { nodeId: 'did:key:zNope' }, { parent: 'x' }, { hostPeerId: '' }, { expiresAt: NOW }, { issuedAt: 1.5 }]) {
      assert.throws(() => buildCard(info(key, extra)), { name: 'InvalidArgumentError' }, JSON.stringify(extra))
    }
  })

  it('card - signature header is {alg: EdDSA, typ: JOSE, kid: nodeId}', () => {
    const signed = signCard(buildCard(info(key)), key)
    assert.equal(signed.signatures.length, 1)
    const header = JSON.parse(Buffer.from(signed.signatures[0].protected, 'base64url').toString('utf8')) as unknown
    assert.deepEqual(header, { alg: 'EdDSA', typ: 'JOSE', kid: key.id })
  })

  it('card - signature verifies with the independent jose library (detached payload re-attached)', async () => {
    const signed = signCard(buildCard(info(key)), key)
    const payload = Buffer.from(canonicalize(withoutSignatures(signed))).toString('base64url')
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.publicKey).toString('base64url') }
    const publicKey = await importJWK(jwk, 'EdDSA')
    const { protected: prot, signature } = signed.signatures[0]
    const result = await flattenedVerify({ protected: prot, payload, signature }, publicKey)
    assert.deepEqual(result.protectedHeader, { alg: 'EdDSA', typ: 'JOSE', kid: key.id })
    assert.deepEqual(JSON.parse(new TextDecoder().decode(result.payload)), withoutSignatures(signed))
    const otherJwk = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: Buffer.from(other.publicKey).toString('base64url') }, 'EdDSA')
    await assert.rejects(flattenedVerify({ protected: prot, payload, signature }, otherJwk))
  })

  it('card - verifyCard returns the node facts, also after a JSON round trip', () => {
    const parent = generateNodeKey()
    const signed = signCard(buildCard(info(key, { parent: parent.id, kind: 'managed' })), key)
    const vc = verifyCard(JSON.parse(JSON.stringify(signed)))
    assert.equal(vc.nodeId, key.id)
    assert.equal(vc.name, 'worker-1')
    assert.equal(vc.kind, 'managed')
    assert.equal(vc.hostPeerId, HOST)
    assert.deepEqual(vc.hostAddrs, ['/ip4/127.0.0.1/tcp/4001'])
    assert.equal(vc.parent, parent.id)
    assert.equal(vc.issuedAt, NOW)
    assert.equal(vc.expiresAt, NOW + HOUR)
    assert.deepEqual(vc.card, signed)
    assert.equal(verifyCard(clone(signed)), vc, 'second verification is a cache hit')
    assert.ok(Object.isFrozen(vc.card.capabilities.extensions[0].params))
  })

  it('card - a card signed by another key is rejected', () => {
    const forged = signCard(buildCard(info(key)), other)
    assert.throws(() => verifyCard(forged), { name: 'CardSignatureError' })
  })

  it('card - a card naming another node but carrying the signer key is rejected', () => {
    const card = buildCard(info(key))
    card.capabilities.extensions[0].params.publicKey = Buffer.from(other.publicKey).toString('base64url')
    assert.throws(() => verifyCard(signCard(card, other)), { name: 'CardSignatureError' })
  })

  it('card - a tampered card is rejected', () => {
    const signed = signCard(buildCard(info(key)), key)
    const edits: Array<(c: SignedAgentCard) => void> = [
      (c) => { c.name = 'lead' },
      (c) => { c.capabilities.extensions[0].params.hostPeerId = '12D3KooWOther' },
      (c) => { c.capabilities.extensions[0].params.expiresAt += 1 },
      (c) => { c.capabilities.extensions[0].params.hostAddrs.push('/ip4/10.0.0.1/tcp/1') },
      (c) => { c.skills[0].tags.push('x') },
      (c) => { (c as unknown as Record<string, unknown>).extra = 1 },
      (c) => { c.signatures[0].signature = flipFirstByte(c.signatures[0].signature) }
    ]
    for (const edit of edits) {
      const tampered = clone(signed)
      edit(tampered)
      assert.throws(() => verifyCard(tampered), { name: 'CardSignatureError' }, edit.toString())
    }
  })

  it('card - signatures with a wrong kid, alg or crit do not count', () => {
    const card = buildCard(info(key))
    const payload = Buffer.from(canonicalize(card)).toString('base64url')
    const headers = [
      { alg: 'EdDSA', typ: 'JOSE', kid: other.id },
      { alg: 'none', typ: 'JOSE', kid: key.id },
      { alg: 'EdDSA', typ: 'JWT', kid: key.id },
      { alg: 'EdDSA', typ: 'JOSE', kid: key.id, crit: ['b64'], b64: false }
    ]
    for (const header of headers) {
      const prot = Buffer.from(JSON.stringify(header)).toString('base64url')
      const signature = Buffer.from(key.sign(new TextEncoder().encode(`${prot}.${payload}`))).toString('base64url')
      assert.throws(() => verifyCard({ ...card, signatures: [{ protected: prot, signature }] }), { name: 'CardSignatureError' }, JSON.stringify(header))
    }
  })

  it('card - several signatures: one valid by the node key is enough (rotation)', () => {
    const twice = signCard(signCard(buildCard(info(key)), other), key)
    assert.equal(twice.signatures.length, 2)
    assert.equal(verifyCard(twice).nodeId, key.id)
  })

  it('card - malformed cards get CardMalformedError', () => {
    const signed = signCard(buildCard(info(key)), key)
    const cases: unknown[] = [
      null, 'card', [], { ...signed, signatures: [] }, { ...withoutSignatures(signed) },
      { ...signed, name: 42 }, { ...signed, supportedInterfaces: [] }, { ...signed, skills: 'x' },
      { ...signed, capabilities: { streaming: true } }, { ...signed, capabilities: { ...signed.capabilities, extensions: [] } },
      { ...signed, defaultInputModes: [1] }, { ...signed, signatures: [{ protected: 'x' }] }, { ...signed, description: undefined }
    ]
    const params = (f: (p: Record<string, unknown>) => void): unknown => {
      const c = clone(signed)
      f(c.capabilities.extensions[0].params as unknown as Record<string, unknown>)
      return c
    }
    cases.push(params((p) => { p.kind = 'root' }), params((p) => { p.nodeId = 'bob' }), params((p) => { p.issuedAt = p.expiresAt }),
      params((p) => { p.parent = 'x' }), params((p) => { delete p.hostAddrs }))
    for (const value of cases) assert.throws(() => verifyCard(value), { name: 'CardMalformedError' }, JSON.stringify(value)?.slice(0, 80))
  })

  it('card - isExpired compares with expiresAt', () => {
    const vc = verifyCard(signCard(buildCard(info(key)), key))
    assert.equal(isExpired(vc, NOW), false)
    assert.equal(isExpired(vc, NOW + HOUR - 1), false)
    assert.equal(isExpired(vc, NOW + HOUR), true)
  })
})
