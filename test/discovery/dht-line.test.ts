// Ten hosts on loopback in a line (mDNS off, gossip off, each bootstrapped by
// its one neighbour): names and node ids resolve through amesh's DHT, forged
// records are rejected by the validators, stale ones lose to newer ones, and a
// name claimed on two hosts is a collision naming both.
import { strict as assert } from 'node:assert'
import type { KadDHT } from '@libp2p/kad-dht'
import type { Libp2p } from 'libp2p'
import { buildCard, signCard, verifyCard } from '../../src/discovery/card.js'
import { decodeCardRecord, encodeCardRecord, recordKey } from '../../src/discovery/records.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { decodePacket } from '../../src/packet/codec.js'
import type { LocalNode } from '../../src/store/nodes.js'
import { drain, routingTableSize, startDhtPeer, startHost, stopHosts, until, type TestHost } from './hosts.js'

const N = 10

async function inboxTexts (h: TestHost, nodeId: string): Promise<string[]> {
  return (await h.host.inbox.read(nodeId, 0, 1000)).map((e) => decodePacket(e.packet).payload.text ?? '')
}

/** A plain libp2p peer speaking amesh's DHT protocol but storing anything: it plays the attacker. */
async function startAttacker (): Promise<Libp2p<{ dht: KadDHT }>> {
  return await startDhtPeer({
    validators: { 'amesh-card': async () => {}, 'amesh-name': async () => {} },
    selectors: { 'amesh-card': () => 0, 'amesh-name': () => 0 }
  })
}


describe('discovery - ten hosts in a line resolve through the DHT', function () {
  this.timeout(120_000)
  const hosts: TestHost[] = []
  let far: LocalNode

  before(async function () {
    for (let i = 0; i < N; i++) hosts.push(await startHost(i === 0 ? [] : [hosts[i - 1].addr], { gossip: false }))
    await until('every host has a DHT neighbour', () => hosts.every((h) => routingTableSize(h) >= 1))
    far = await hosts[0].host.registry.add('far-node')
    await hosts[0].parts.discovery.publishAll()
  })

  after(async () => { await stopHosts(hosts) })

  it('line - each host was bootstrapped by one neighbour only', () => {
    for (let i = 1; i < N; i++) assert.deepEqual(hosts[i].host.config.peers, [hosts[i - 1].addr])
    assert.deepEqual(hosts[0].host.config.peers, [])
  })

  it('line - host 10 resolves a name registered on host 1 through the DHT; the card verifies', async () => {
    const h10 = hosts[N - 1]
    const cards = await h10.parts.discovery.resolve('far-node')
    assert.equal(cards.length, 1)
    const [vc] = cards
    assert.equal(vc.nodeId, far.record.id)
    assert.equal(vc.hostPeerId, hosts[0].host.libp2p.peerId.toString())
    // the signature checks out independently of the resolver's own verification
    assert.equal(verifyCard(JSON.parse(JSON.stringify(vc.card))).nodeId, far.record.id)
    const tampered = { ...JSON.parse(JSON.stringify(vc.card)), description: 'tampered' }
    assert.throws(() => verifyCard(tampered), { name: 'CardSignatureError' })
    // and by node id
    const byId = await h10.parts.discovery.resolve(far.record.id)
    assert.equal(byId[0]?.name, 'far-node')
  })

  it('line - host 10 sends to the name and host 1 stores the message', async () => {
    const h10 = hosts[N - 1]
    assert.equal(await h10.host.discovery?.lookup('far-node'), true)
    // the ACL needs far-node's grant; host 1 resolves near-node (on host 10) through the DHT as well
    await h10.host.registry.add('near-node')
    await h10.parts.discovery.publishAll()
    const granted = await hosts[0].host.acl.grant({ as: 'far-node', to: 'near-node', signals: ['MESSAGE'] })
    assert.equal(granted.handed, true)
    // the grant travels to host 10 asynchronously: retry until the sender-side check passes
    const r = await until('the send to be authorised', async () => await h10.host.sender.send({ as: 'near-node', to: 'far-node', text: 'over the dht' }))
    assert.equal(r.state, 'queued')
    const texts = await until('the message in far-node\'s inbox', async () => {
      const t = await inboxTexts(hosts[0], far.record.id)
      return t.length > 0 ? t : undefined
    })
    assert.deepEqual(texts, ['over the dht'])
  })

  it('line - a forged card is rejected by the validators; a stale card is replaced by the newer one', async () => {
    const attacker = await startAttacker()
    try {
      await attacker.dial(hosts[4].host.libp2p.getMultiaddrs()[0])
      const key = recordKey(far.record.id)
      const genuineOld = hosts[0].host.cards.cardOf(far)
      // a newer card, signed by the wrong key
      const forger = generateNodeKey()
      const now = Date.now()
      const forged = signCard(buildCard({ nodeId: far.record.id, name: 'far-node', kind: 'external', hostPeerId: attacker.peerId.toString(), hostAddrs: [], issuedAt: now, expiresAt: now + 3_600_000 }), forger)
      await drain(attacker.services.dht.put(key, encodeCardRecord(forged)))
      // the node republishes a newer card, then the attacker replays the old (validly signed) one
      hosts[0].host.cards.invalidate(far.record.id)
      await new Promise((resolve) => setTimeout(resolve, 5))
      await hosts[0].parts.discovery.publishAll()
      const newer = hosts[0].host.cards.cardOf(far)
      assert.ok(verifyCard(newer).issuedAt > verifyCard(genuineOld).issuedAt)
      await drain(attacker.services.dht.put(key, encodeCardRecord(genuineOld)))

      const h8 = hosts[7]
      const values = await h8.parts.discovery.records.values(key)
      assert.ok(values.length >= 1)
      for (const v of values) {
        const vc = decodeCardRecord(v)
        assert.equal(vc.hostPeerId, hosts[0].host.libp2p.peerId.toString(), 'a forged record came back from the DHT')
      }
      const found = await h8.parts.discovery.resolve(far.record.id)
      assert.equal(found.length, 1)
      assert.equal(found[0].issuedAt, verifyCard(newer).issuedAt)
      assert.equal(h8.host.directory.get(far.record.id)?.issuedAt, verifyCard(newer).issuedAt)
      // the directory keeps the newer card when the stale one arrives later
      assert.equal(await h8.host.directory.learn(genuineOld), undefined)
      assert.equal(h8.host.directory.get(far.record.id)?.issuedAt, verifyCard(newer).issuedAt)
      await assert.rejects(h8.host.directory.learn(forged), { name: 'CardSignatureError' })
    } finally {
      await attacker.stop()
    }
  })

  it('line - a name claimed on two hosts is a collision naming both; sending by id still works', async () => {
    const a = await hosts[2].host.registry.add('twin')
    await hosts[2].parts.discovery.publishAll()
    const b = await hosts[6].host.registry.add('twin')
    await hosts[6].parts.discovery.publishAll()
    const h10 = hosts[N - 1]
    const cards = await h10.parts.discovery.resolve('twin')
    assert.deepEqual(cards.map((c) => c.nodeId).sort(), [a.record.id, b.record.id].sort())
    await assert.rejects(h10.host.resolver.resolve('twin'), (err: Error) => {
      assert.equal(err.name, 'NameCollisionError')
      assert.match(err.message, new RegExp(`${a.record.id}.*${b.record.id}|${b.record.id}.*${a.record.id}`))
      return true
    })
    await assert.rejects(h10.host.sender.send({ as: 'near-node', to: 'twin', text: 'which one?' }), { name: 'NameCollisionError' })
    await hosts[2].host.acl.grant({ as: a.record.id, to: 'near-node', signals: ['MESSAGE'] })
    await until('the send by id to be authorised', async () => await h10.host.sender.send({ as: 'near-node', to: a.record.id, text: 'by id' }))
    assert.deepEqual(await until('the message by id', async () => {
      const t = await inboxTexts(hosts[2], a.record.id)
      return t.length > 0 ? t : undefined
    }), ['by id'])
    assert.deepEqual(await inboxTexts(hosts[6], b.record.id), [])
  })
})
