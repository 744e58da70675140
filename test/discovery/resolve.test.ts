// Resolution without a storm (host/resolve.ts, discovery/cards-protocol.ts,
// discovery/discovery.ts): four real hosts on loopback, B, C and D each
// bootstrapped to hub A only (gossip off). A resolve of a name nobody serves
// asks each connected peer for its cards at most once per connection (peers
// already exchanged with are not asked again, concurrent resolvers share an
// exchange), concurrent resolves of one target share one DHT lookup, and a
// name claimed by two nodes is still a collision naming both.
import { strict as assert } from 'node:assert'
import type { LocalNode } from '../../src/store/nodes.js'
import { startHost, stopHosts, until, type TestHost } from './hosts.js'

const peerIdOf = (h: TestHost): string => h.host.libp2p.peerId.toString()

/** How many card exchanges each peer served for `from` (counted on the peers, as they arrived). */
function servedFor (peers: TestHost[], from: TestHost): number[] {
  return peers.map((p) => p.host.exchange.servedCount(peerIdOf(from)))
}

async function rejectsUnknown (work: Promise<unknown>): Promise<void> {
  await assert.rejects(work, { name: 'UnknownNodeError' })
}

describe('discovery - resolution asks each peer once and the DHT once', function () {
  this.timeout(120_000)
  const hosts: TestHost[] = []
  let a: TestHost
  let peers: TestHost[]
  const nodes: LocalNode[] = []

  before(async function () {
    a = await startHost([], { gossip: false })
    hosts.push(a)
    for (let i = 0; i < 3; i++) hosts.push(await startHost([a.addr], { gossip: false }))
    peers = hosts.slice(1)
    for (const [i, p] of peers.entries()) nodes.push(await p.host.registry.add(`peer-${i}`))
    await until('A knows every peer\'s node', () => nodes.every((n) => a.host.directory.get(n.record.id) !== undefined))
    await until('A exchanged cards with every peer on its connection', () => peers.every((p) => a.host.exchange.exchangedWith(p.host.libp2p.peerId)))
  })

  after(async () => { await stopHosts(hosts) })

  it('resolve - an unknown name asks no peer already exchanged with on its connection, however many resolves run', async () => {
    const before = servedFor(peers, a)
    await Promise.all(Array.from({ length: 5 }, async () => await rejectsUnknown(a.host.resolver.resolve('nobody-serves-this'))))
    await rejectsUnknown(a.host.resolver.resolve('nobody-serves-this'))
    await rejectsUnknown(a.host.resolver.resolve('nor-this'))
    for (const p of peers) assert.equal(a.host.libp2p.getConnections(p.host.libp2p.peerId).length > 0, true, 'a peer disconnected during the test')
    assert.deepEqual(servedFor(peers, a), before)
  })

  it('resolve - on a new connection, concurrent resolves share one exchange with that peer', async () => {
    const b = peers[0]
    const bId = b.host.libp2p.peerId
    const old = new Set(b.host.libp2p.getConnections(a.host.libp2p.peerId).map((c) => c.id))
    await a.host.libp2p.hangUp(bId)
    // B's bootstrap keeper may dial A again at once: what matters is that B closed the old connection
    await until('B saw A disconnect', () => b.host.libp2p.getConnections(a.host.libp2p.peerId).every((c) => !old.has(c.id)) ? true : undefined)
    await a.host.libp2p.dial(bId)
    await Promise.all(Array.from({ length: 5 }, async () => await rejectsUnknown(a.host.resolver.resolve('still-nobody'))))
    await rejectsUnknown(a.host.resolver.resolve('still-nobody'))
    const connections = a.host.libp2p.getConnections(bId).length
    assert.ok(connections >= 1)
    // per connection: one exchange from A's resolvers at most, plus the one A runs itself when identify completes
    const served = b.host.exchange.servedCount(peerIdOf(a))
    assert.ok(served >= 1 && served <= 2 * connections, `B served ${served} exchanges to A on ${connections} connection(s)`)
  })

  it('resolve - concurrent resolves of one name make one DHT lookup', async () => {
    const discovery = a.parts.discovery
    const lookups = discovery.lookupsRun
    const queries = discovery.records.queries
    await Promise.all(Array.from({ length: 6 }, async () => await rejectsUnknown(a.host.resolver.resolve('absent-node'))))
    assert.equal(discovery.lookupsRun - lookups, 1)
    // the name asked twice (a miss is asked once more), never a card: nobody claims it
    assert.equal(discovery.records.queries - queries, 2)
    // a later resolve is a new lookup (nothing negative is remembered)
    await rejectsUnknown(a.host.resolver.resolve('absent-node'))
    assert.equal(discovery.lookupsRun - lookups, 2)
  })

  it('resolve - a name claimed by two nodes fails with the collision error naming both, by exchange and by DHT', async () => {
    const x = await peers[1].host.registry.add('twin')
    const y = await peers[2].host.registry.add('twin')
    await Promise.all([peers[1].parts.discovery.publishAll(), peers[2].parts.discovery.publishAll()])
    const namesBoth = (err: Error): boolean => {
      assert.equal(err.name, 'NameCollisionError')
      assert.ok(err.message.includes(x.record.id) && err.message.includes(y.record.id), err.message)
      return true
    }
    await assert.rejects(a.host.resolver.resolve('twin'), namesBoth)
    // through the DHT alone (discovery.lookup never reads the directory), from another host
    await assert.rejects(peers[0].parts.discovery.lookup('twin'), namesBoth)
  })
})
