// The simulation's quick variant: 12 real amesh hosts in this process on the
// in-memory transport and store (bench/sim), in the T7 tree; random pairs are
// granted and sent to by name. Every accepted send must be in its target's
// inbox exactly once, from its sender, and nothing else may be there.
import { strict as assert } from 'node:assert'
import { renderEntry } from '../../src/packet/render.js'
import { SimNet } from '../../bench/sim/net.js'
import { grantAll, pool, randomPairs, reasons, sendOne, waitDelivered, type Sent } from '../../bench/sim/traffic.js'
import { seeded } from '../../src/util/seeded.js'

const HOSTS = 12
const SENDS = 60

describe('simulation: many hosts in one process', function () {
  this.timeout(900_000)
  let net: SimNet | undefined

  afterEach(async () => { await net?.stop(); net = undefined })

  it(`delivers every accepted send between random pairs of ${HOSTS} hosts exactly once`, async () => {
    net = new SimNet({ latency: 0 })
    await net.grow(HOSTS)
    assert.equal(await net.waitJoined(120_000), 0, 'every host exchanged cards with its bootstrap parent')
    const pairs = randomPairs(HOSTS, SENDS, seeded(7))
    const grantFailures = new Map<string, number>()
    await grantAll(net.hosts, pairs, 16, grantFailures)
    assert.equal(reasons(grantFailures), '', 'every grant issued and held by the sender\'s host')
    const refused = new Map<string, number>()
    const sent: Sent[] = []
    await pool(pairs, 16, async (p, k) => {
      const s = await sendOne(net!.hosts, p, k, refused)
      if (s !== undefined) sent.push(s)
    })
    assert.equal(reasons(refused), '', 'no send refused')
    assert.equal(sent.length, SENDS)
    const count = await waitDelivered(net.hosts, sent, 120_000)
    assert.deepEqual(count, { delivered: SENDS, lost: 0, duplicated: 0 })
    // each inbox holds exactly what was sent to it, once, from the right sender
    for (const h of net.hosts) {
      const node = h.running.nodes.get(h.name)!
      const got = (await h.running.inbox.read(node.record.id, 0, Number.MAX_SAFE_INTEGER)).map((e) => renderEntry(e, (id) => h.running.label(id)))
      const want = sent.filter((s) => s.pair.to === h.index)
      assert.deepEqual(got.map((r) => r.id).sort(), want.map((s) => s.id).sort(), `inbox of ${h.name}`)
      const fromOf = new Map(want.map((s) => [s.id, net!.hosts[s.pair.from].name]))
      for (const r of got) assert.equal(r.from, fromOf.get(r.id), `sender of ${r.id}`)
    }
  })
})
