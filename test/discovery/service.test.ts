// The discovery service's lifecycle (discovery/service.ts): start and stop
// are safe to call twice, stop takes back every listener start added, and a
// stopped service starts again and still resolves through the DHT. Two real
// hosts on loopback, B bootstrapped to A, gossip off.
import { strict as assert } from 'node:assert'
import { routingTableSize, startHost, stopHosts, until, type TestHost } from './hosts.js'

describe('discovery - the service starts and stops once, and again', function () {
  this.timeout(120_000)
  const hosts: TestHost[] = []

  before(async () => {
    hosts.push(await startHost([], { gossip: false }))
    hosts.push(await startHost([hosts[0].addr], { gossip: false }))
    await until('both hosts have a DHT neighbour', () => hosts.every((h) => routingTableSize(h) >= 1))
  })

  after(async () => { await stopHosts(hosts) })

  it('lifecycle - a second start adds nothing, stop removes what start added (also twice), a restart resolves through the DHT', async () => {
    const [a, b] = hosts
    const identify = (): number => a.host.libp2p.listenerCount('peer:identify')
    const cards = (): number => a.host.directory.listenerCount('card')
    const stopListeners = (): number => a.host.libp2p.listenerCount('stop')
    const started = { identify: identify(), cards: cards(), stop: stopListeners() }

    await a.discovery.start()
    assert.deepEqual({ identify: identify(), cards: cards(), stop: stopListeners() }, started)

    await a.discovery.stop()
    assert.deepEqual({ identify: identify(), cards: cards(), stop: stopListeners() }, { identify: started.identify - 1, cards: started.cards - 1, stop: started.stop - 1 })
    await a.discovery.stop()
    assert.deepEqual({ identify: identify(), cards: cards(), stop: stopListeners() }, { identify: started.identify - 1, cards: started.cards - 1, stop: started.stop - 1 })

    await a.discovery.start()
    assert.deepEqual({ identify: identify(), cards: cards(), stop: stopListeners() }, started)

    const node = await b.host.registry.add('svc-node')
    await b.discovery.publishAll()
    const lookups = a.discovery.lookupsRun
    assert.equal(await a.discovery.lookup('svc-node'), true)
    assert.equal(a.discovery.lookupsRun - lookups, 1)
    assert.equal(a.host.directory.get(node.record.id)?.name, 'svc-node')
  })
})
