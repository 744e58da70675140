// Issue 17 item 4: a stranger pushing 100,000 self-signed junk cards over the
// card exchange fills only its own quota; a real node of another host is still
// learnt, granted and delivered to, and the log names the throttled and then
// disconnected peer.
import { strict as assert } from 'node:assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { MAX_CARDS_PER_HOST } from '../../src/discovery/card-quota.js'
import { decodePacket } from '../../src/packet/codec.js'
import type { RunningHost as Host } from '../../src/host/components.js'
import { waitFor } from '../utils/hosts.js'
import { startInProcessHost } from '../utils/in-process.js'
import { pushCards } from '../utils/junk.js'
import { JunkPool } from '../utils/junk-pool.js'

const FLOOD = 100_000
/** cards per message: ~1.3 KB each keeps a message near 3.3 MB, under the 4 MiB cap */
const BATCH = 2500

function addr (h: Host): string { return h.libp2p.getMultiaddrs()[0].toString() }

async function texts (h: Host, nodeId: string): Promise<string[]> {
  return (await h.inbox.read(nodeId, 0, 1000)).map((e) => decodePacket(e.packet).payload.text ?? '')
}

const MIB = 1024 * 1024
/** what one flooding peer may add to the process heap (the hosts live in the test process); 100,000 cards held took ~550 MiB */
const HEAP_BOUND = 64 * MIB

/** Heap in use after a full collection (so the flood's own garbage does not count). */
function heapAfterGc (): number {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  return process.memoryUsage().heapUsed
}

/**
 * The heap once the flood's in-flight work has drained: on a loaded machine the
 * receiver may still be parsing queued messages when it logs the disconnect, so
 * sample after a full collection every 2 s for up to 60 s and keep the lowest.
 * Memory that is retained never drops, so this cannot hide a leak.
 */
async function settledHeap (goal: number): Promise<number> {
  let lowest = heapAfterGc()
  for (let i = 0; i < 30 && lowest >= goal; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    lowest = Math.min(lowest, heapAfterGc())
  }
  return lowest
}

describe('discovery - a junk card flood from one peer', function () {
  this.timeout(600_000)
  const hosts: Array<{ host: Host, stop: () => Promise<void> }> = []

  after(async () => { for (const h of hosts.reverse()) await h.stop().catch(() => {}) })

  it('fills only that peer\'s quota; a real node of another host is still learnt, granted and delivered to', async () => {
    const b = await startInProcessHost()
    hosts.push(b)
    const junk = await startInProcessHost()
    hosts.push(junk)
    const recv = await b.host.registry.add('recv')
    const bPeer = b.host.libp2p.peerId
    const junkPeer = junk.host.libp2p.peerId.toString()
    await junk.host.keeper.join(addr(b.host))
    const before = process.memoryUsage()
    const heapBefore = heapAfterGc()
    let refused = 0
    // the cards are made on worker threads, the next batches while one is sent
    const pool = new JunkPool()
    try {
      const ahead = new Map<number, Promise<Uint8Array>>()
      const make = (from: number): void => { if (from < FLOOD && !ahead.has(from)) ahead.set(from, pool.message(BATCH, junkPeer, from)) }
      for (let sent = 0; sent < FLOOD; sent += BATCH) {
        for (let k = 0; k <= pool.size; k++) make(sent + k * BATCH)
        const message = await (ahead.get(sent) as Promise<Uint8Array>)
        ahead.delete(sent)
        try { await pushCards(junk.host.libp2p, bPeer, message) } catch { refused++ }
      }
    } finally {
      await pool.close()
    }
    // measure what is retained, not what a loaded machine still has in flight:
    // first let the receiver finish with the flood (it disconnects the peer)
    const logOf = (): string => readFileSync(join(b.host.paths.home, 'amesh.log'), 'utf8')
    await waitFor(async () => logOf().includes(`cards: disconnecting peer ${junkPeer}`) || undefined, 120_000, 'the flooding peer to be disconnected')
    const afterFlood = process.memoryUsage()
    // the flooder shares this process only for the test's convenience: what it holds is not the receiver's
    hosts.splice(hosts.indexOf(junk), 1)
    await junk.stop()
    const heapAfter = await settledHeap(heapBefore + HEAP_BOUND)
    const held = b.host.directory.quota.count(junkPeer)
    console.log(`      flood: ${FLOOD} cards in ${FLOOD / BATCH} messages, ${refused} refused by a closed connection; ` +
      `directory holds ${held} of them (${b.host.directory.list().length} in all); ` +
      `test process RSS ${Math.round(before.rss / MIB)} -> ${Math.round(afterFlood.rss / MIB)} MiB, heap after GC ${Math.round(heapBefore / MIB)} -> ${Math.round(heapAfter / MIB)} MiB`)
    assert.ok(heapAfter - heapBefore < HEAP_BOUND, `the flood grew the heap by ${Math.round((heapAfter - heapBefore) / MIB)} MiB`)
    assert.equal(held, MAX_CARDS_PER_HOST, 'the flooding peer fills exactly its quota')
    assert.equal(b.host.directory.list().length, MAX_CARDS_PER_HOST)
    const log = logOf()
    assert.match(log, new RegExp(`cards: peer ${junkPeer} throttled`))
    assert.match(log, new RegExp(`cards: disconnecting peer ${junkPeer}`))

    const c = await startInProcessHost()
    hosts.push(c)
    const real = await c.host.registry.add('real')
    await c.host.keeper.join(addr(b.host))
    await waitFor(async () => b.host.directory.get(real.record.id) !== undefined, 20_000, 'B to learn the real node')
    await waitFor(async () => c.host.directory.get(recv.record.id) !== undefined, 20_000, 'C to learn recv')
    const toReal = await b.host.acl.grant({ as: 'recv', to: real.record.id })
    assert.equal(toReal.handed, true)
    const toRecv = await c.host.acl.grant({ as: 'real', to: recv.record.id })
    assert.equal(toRecv.handed, true)
    await c.host.sender.send({ as: 'real', to: 'recv', text: 'from the real node' })
    await b.host.sender.send({ as: 'recv', to: real.record.id, text: 'to the real node' })
    assert.deepEqual(await waitFor(async () => { const t = await texts(b.host, recv.record.id); return t.length > 0 && t }, 20_000, 'delivery to recv'), ['from the real node'])
    assert.deepEqual(await waitFor(async () => { const t = await texts(c.host, real.record.id); return t.length > 0 && t }, 20_000, 'delivery to real'), ['to the real node'])
  })
})
