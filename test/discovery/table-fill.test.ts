// Routing-table starvation (issue 16): a host that joins through one peer
// after its own first self-query ran (kad-dht's, 1 s after start: here with
// no peer at all) would hold only that peer until kad-dht's next self-query
// and refresh, 5 minutes later, since nobody else has a reason to dial it.
// Discovery's table filler asks for the host's closest peers when the thin
// table grows, and the host meets the rest of the net through its one peer.
// Real hosts on loopback, mDNS off.
import { strict as assert } from 'node:assert'
import { routingTableSize, startHost, stopHosts, until, type TestHost } from './hosts.js'

const OTHERS = 4

function sleep (ms: number): Promise<void> { return new Promise((resolve) => setTimeout(resolve, ms)) }

describe('discovery - a thin routing table fills from the one peer it joined through', function () {
  this.timeout(120_000)
  const hosts: TestHost[] = []
  let hub: TestHost
  let late: TestHost

  before(async function () {
    hub = await startHost([])
    hosts.push(hub)
    for (let i = 0; i < OTHERS; i++) hosts.push(await startHost([hub.addr]))
    await until('the hub holds every other host in its routing table', () => routingTableSize(hub) >= OTHERS, 30_000)
    // the filler's first ask waits 3 s after start instead of its default 10 s (FILL_FIRST_DELAY): still after
    // kad-dht's own first self-query (1 s) and the join below (2 s), and asked only once the joined peer arrived
    late = await startHost([], { tableFill: { firstDelay: 3_000 } })
    hosts.push(late)
    // kad-dht's own first self-query runs 1 s after start: let it run (and find nothing) before the host joins
    await sleep(2_000)
    await late.host.keeper.join(hub.addr)
  })

  after(async () => { await stopHosts(hosts) })

  it('table fill - the late host holds the hub and, through its self-query, every other host', async () => {
    await until('the late host\'s routing table to hold all five others', () => routingTableSize(late) >= OTHERS + 1, 60_000)
    const ids = new Set(hosts.slice(0, -1).map((h) => h.host.libp2p.peerId.toString()))
    const table = (late.host.libp2p.services as unknown as { dht: { routingTable: { kb: { toIterable: () => Iterable<{ peerId: { toString: () => string } }> } } } }).dht.routingTable.kb.toIterable()
    const held = [...table].map((c) => c.peerId.toString())
    assert.deepEqual(new Set(held), ids)
  })

  it('table fill - the late host was configured with no peer (it joined the hub alone)', () => {
    assert.deepEqual(late.host.config.peers, [])
  })
})
