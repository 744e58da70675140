import { strict as assert } from 'node:assert'
import { generateNodeKey, type NodeKey } from '../../src/identity/node-key.js'
import { buildCard, signCard, type CardInfo, type SignedAgentCard } from '../../src/discovery/card.js'
import {
  MAX_CARD_RECORD_BYTES, ameshSelectors, ameshValidators, createAmeshSelectors, createAmeshValidators,
  decodeCardRecord, decodeNameClaim, decodeNameRecord, encodeCardRecord, encodeNameClaim, encodeNameRecord,
  mergeNameClaims, nameKey, parseKey, recordKey, resolveName, signNameClaim, type NameClaim, type SignedNameClaim
} from '../../src/discovery/records.js'

const NOW = 1_700_000_000_000
const HOUR = 60 * 60 * 1000
const HOST_A = '12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq'
const HOST_B = '12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo'

const validators = createAmeshValidators(() => NOW)
const selectors = createAmeshSelectors(() => NOW)

function card (key: NodeKey, extra: Partial<CardInfo> = {}, signer: NodeKey = key): SignedAgentCard {
  const info: CardInfo = {
    nodeId: key.id, name: 'lead', kind: 'external', hostPeerId: HOST_A, hostAddrs: ['/ip4/127.0.0.1/tcp/4001'],
    issuedAt: NOW - HOUR, expiresAt: NOW + HOUR, ...extra
  }
  return signCard(buildCard(info), signer)
}

function claim (key: NodeKey, extra: Partial<NameClaim> = {}): SignedNameClaim {
  return signNameClaim({ name: 'lead', nodeId: key.id, hostPeerId: HOST_A, issuedAt: NOW - HOUR, expiresAt: NOW + HOUR, ...extra }, key)
}

async function rejects (type: string, key: Uint8Array, value: Uint8Array, name: string): Promise<void> {
  await assert.rejects(validators[type](key, value), { name })
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s)

describe('discovery/records', () => {
  const a = generateNodeKey()
  const b = generateNodeKey()

  describe('keys', () => {
    it('records - card and name keys have kad-dht form /<type>/<id>', () => {
      const ck = new TextDecoder().decode(recordKey(a.id))
      assert.equal(ck, `/amesh-card/${a.id}`)
      assert.deepEqual(ck.split('/').slice(0, 2), ['', 'amesh-card'])
      assert.equal(ck.split('/').length, 3)
      assert.equal(new TextDecoder().decode(nameKey('worker-1')), '/amesh-name/worker-1')
      assert.deepEqual(parseKey(recordKey(a.id)), { type: 'card', nodeId: a.id })
      assert.deepEqual(parseKey(nameKey('worker-1')), { type: 'name', name: 'worker-1' })
      assert.ok(typeof ameshValidators['amesh-card'] === 'function' && typeof ameshValidators['amesh-name'] === 'function')
      assert.ok(typeof ameshSelectors['amesh-card'] === 'function' && typeof ameshSelectors['amesh-name'] === 'function')
    })

    it('records - keys reject ids and names that would break the key', () => {
      assert.throws(() => recordKey('did:key:zBad'), { name: 'RecordInvalidError' })
      for (const n of ['a/b', '', ' lead', '../x', 'x'.repeat(65)]) assert.throws(() => nameKey(n), { name: 'RecordInvalidError' }, n)
      for (const k of ['/amesh-card/x', '/amesh-name/a/b', '/pk/x', 'amesh-card']) assert.throws(() => parseKey(text(k)), { name: 'RecordInvalidError' }, k)
    })
  })

  describe('card records', () => {
    it('records - card record round trip', () => {
      const signed = card(a)
      const vc = decodeCardRecord(encodeCardRecord(signed))
      assert.equal(vc.nodeId, a.id)
      assert.deepEqual(vc.card, signed)
    })

    it('records - card validator accepts a valid card under its own key', async () => {
      await validators['amesh-card'](recordKey(a.id), encodeCardRecord(card(a)))
    })

    it('records - card validator rejects forged, expired, future, mismatched and malformed records', async () => {
      const k = recordKey(a.id)
      await rejects('amesh-card', k, encodeCardRecord(card(a, {}, b)), 'CardSignatureError')
      await rejects('amesh-card', k, encodeCardRecord(card(a, { issuedAt: NOW - 2 * HOUR, expiresAt: NOW - 1 })), 'RecordExpiredError')
      await rejects('amesh-card', k, encodeCardRecord(card(a, { issuedAt: NOW + HOUR, expiresAt: NOW + 2 * HOUR })), 'RecordInvalidError')
      await rejects('amesh-card', recordKey(b.id), encodeCardRecord(card(a)), 'RecordKeyMismatchError')
      await rejects('amesh-card', k, text(JSON.stringify(card(a), null, 2)), 'RecordInvalidError')
      await rejects('amesh-card', k, text('not json'), 'RecordInvalidError')
      await rejects('amesh-card', k, Uint8Array.from([0xff, 0xfe]), 'RecordInvalidError')
      await rejects('amesh-card', k, new Uint8Array(MAX_CARD_RECORD_BYTES + 1), 'RecordInvalidError')
      await rejects('amesh-card', k, text('{"name":"lead"}'), 'CardMalformedError')
      await rejects('amesh-card', nameKey('lead'), encodeCardRecord(card(a)), 'RecordInvalidError')
    })

    it('records - card selector picks the newest valid card', () => {
      const k = recordKey(a.id)
      const older = encodeCardRecord(card(a, { issuedAt: NOW - 2 * HOUR }))
      const newer = encodeCardRecord(card(a, { issuedAt: NOW - HOUR, hostPeerId: HOST_B }))
      const forgedNewest = encodeCardRecord(card(a, { issuedAt: NOW }, b))
      const expiredNewest = encodeCardRecord(card(a, { issuedAt: NOW - 1, expiresAt: NOW }))
      assert.equal(selectors['amesh-card'](k, [older, newer]), 1)
      assert.equal(selectors['amesh-card'](k, [newer, older]), 0)
      assert.equal(selectors['amesh-card'](k, [forgedNewest, older, expiredNewest, newer, text('junk')]), 3)
    })

    it('records - card selector breaks exact ties the same way in any order', () => {
      const k = recordKey(a.id)
      const x = encodeCardRecord(card(a, { hostPeerId: HOST_A }))
      const y = encodeCardRecord(card(a, { hostPeerId: HOST_B }))
      const first = [x, y][selectors['amesh-card'](k, [x, y])]
      const second = [y, x][selectors['amesh-card'](k, [y, x])]
      assert.deepEqual(first, second)
    })
  })

  describe('name claims and name records', () => {
    it('records - a name claim round trips and only its node may sign it', () => {
      const c = claim(a)
      assert.deepEqual(decodeNameClaim(encodeNameClaim(c)), c)
      assert.throws(() => signNameClaim({ name: 'lead', nodeId: a.id, hostPeerId: HOST_A, issuedAt: NOW, expiresAt: NOW + 1 }, b), { name: 'RecordKeyMismatchError' })
      const forged = { ...claim(b), nodeId: a.id }
      assert.throws(() => decodeNameClaim(text(JSON.stringify(forged))), { name: 'RecordInvalidError' })
      const tampered = { ...c, hostPeerId: HOST_B }
      assert.throws(() => decodeNameClaim(encodeNameClaim(tampered)), { name: 'RecordInvalidError' })
      const extra = { ...c, role: 'admin' }
      assert.throws(() => decodeNameClaim(encodeNameClaim(extra)), { name: 'RecordInvalidError' })
    })

    it('records - name record validator accepts a record of valid claims', async () => {
      const value = encodeNameRecord([claim(b), claim(a)])
      await validators['amesh-name'](nameKey('lead'), value)
      assert.deepEqual(decodeNameRecord(value).map((c) => c.nodeId), [a.id, b.id].sort())
    })

    it('records - name record validator rejects forged, mismatched, expired and malformed records', async () => {
      const k = nameKey('lead')
      const forged = { ...claim(b), nodeId: a.id }
      const bad = (claims: unknown[]): Uint8Array => text(JSON.stringify({ claims: [...claims].sort((x, y) => (x as NameClaim).nodeId < (y as NameClaim).nodeId ? -1 : 1) }))
      await rejects('amesh-name', k, bad([forged]), 'RecordInvalidError')
      await rejects('amesh-name', k, bad([claim(b), forged]), 'RecordInvalidError')
      await rejects('amesh-name', k, bad([{ ...claim(a), hostPeerId: HOST_B }]), 'RecordInvalidError')
      await rejects('amesh-name', nameKey('other'), encodeNameRecord([claim(a)]), 'RecordKeyMismatchError')
      await rejects('amesh-name', k, encodeNameRecord([claim(a, { issuedAt: NOW - 2 * HOUR, expiresAt: NOW })]), 'RecordExpiredError')
      await rejects('amesh-name', k, encodeNameRecord([claim(a, { issuedAt: NOW + HOUR, expiresAt: NOW + 2 * HOUR })]), 'RecordInvalidError')
      await rejects('amesh-name', k, bad([claim(a), claim(b, { name: 'lead2' })]), 'RecordInvalidError')
      await rejects('amesh-name', k, text(JSON.stringify({ claims: [claim(a), claim(a, { issuedAt: NOW - 1 })] })), 'RecordInvalidError')
      await rejects('amesh-name', k, text('{"claims":[]}'), 'RecordInvalidError')
      await rejects('amesh-name', k, text(JSON.stringify({ claims: [claim(a)] }, null, 1)), 'RecordInvalidError')
      await rejects('amesh-name', recordKey(a.id), encodeNameRecord([claim(a)]), 'RecordInvalidError')
      assert.throws(() => encodeNameRecord([claim(a), claim(a, { issuedAt: NOW - 1 })]), { name: 'RecordInvalidError' })
    })

    it('records - a record with one expired and one live claim is valid; the expired one is ignored', async () => {
      const value = encodeNameRecord([claim(a, { issuedAt: NOW - 2 * HOUR, expiresAt: NOW - 1 }), claim(b)])
      await validators['amesh-name'](nameKey('lead'), value)
      assert.deepEqual(resolveName('lead', [value], NOW).nodeIds, [b.id])
    })

    it('records - name selector prefers more live claims, then the newest claim', () => {
      const k = nameKey('lead')
      const onlyA = encodeNameRecord([claim(a)])
      const onlyANewer = encodeNameRecord([claim(a, { issuedAt: NOW - 10 })])
      const both = encodeNameRecord([claim(a), claim(b)])
      assert.equal(selectors['amesh-name'](k, [onlyA, both]), 1)
      assert.equal(selectors['amesh-name'](k, [onlyA, onlyANewer]), 1)
      assert.equal(selectors['amesh-name'](k, [onlyANewer, onlyA]), 0)
      assert.equal(selectors['amesh-name'](k, [text('junk'), onlyA]), 1)
    })

    it('records - resolveName detects two nodes claiming one name across peers', () => {
      const fromPeer1 = encodeNameRecord([claim(a)])
      const fromPeer2 = encodeNameRecord([claim(b, { hostPeerId: HOST_B })])
      const single = resolveName('lead', [fromPeer1, fromPeer1], NOW)
      assert.deepEqual(single.nodeIds, [a.id])
      assert.equal(single.collision, false)
      const both = resolveName('lead', [fromPeer1, fromPeer2, text('junk')], NOW)
      assert.deepEqual([...both.nodeIds].sort(), [a.id, b.id].sort())
      assert.equal(both.collision, true)
    })

    it('records - mergeNameClaims keeps the newest claim per node and drops expired ones', () => {
      const old = encodeNameRecord([claim(a, { issuedAt: NOW - 2 * HOUR, hostPeerId: HOST_A })])
      const fresh = claim(a, { issuedAt: NOW - 5, hostPeerId: HOST_B })
      const merged = mergeNameClaims('lead', [old], [fresh], NOW)
      assert.equal(merged.length, 1)
      assert.equal(merged[0].hostPeerId, HOST_B)
      const expired = claim(b, { issuedAt: NOW - 2 * HOUR, expiresAt: NOW - 1 })
      assert.equal(mergeNameClaims('lead', [], [expired], NOW).length, 0)
      const republished = encodeNameRecord(mergeNameClaims('lead', [old, encodeNameRecord([claim(b)])], [fresh], NOW))
      assert.deepEqual(decodeNameRecord(republished).map((c) => c.hostPeerId).sort(), [HOST_A, HOST_B].sort())
    })
  })
})
