// The link may send an outbox entry while its commit is in flight (the
// default, `early`), so the receiver's inbox sync runs beside the sender's
// outbox sync; the reference path hands an entry to the link only once it is
// durable. Both, over real libp2p (TCP, Noise, Yamux on loopback) and real
// LevelDB stores in this process, must deliver the same packets, each once,
// in send order, and leave the sender's outbox empty; with early sending a
// send whose commit fails answers its error, and the acks of what was sent
// early act only on entries that became durable.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { tcp } from '@libp2p/tcp'
import type { Libp2p } from '@libp2p/interface'
import { createLibp2p } from 'libp2p'
import { DeliveryService } from '../../src/delivery/service.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { decodePacket, encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { Committer, batchTarget, openDb, type BatchTarget, type RawDb } from '../../src/store/db.js'
import { InboxStore } from '../../src/store/inbox.js'
import { OutboxStore } from '../../src/store/outbox.js'
import { ulid } from '../../src/util/ulid.js'

const FROM = generateNodeKey().id
const BOB = generateNodeKey().id
const TTL = 600_000

interface Side { libp2p: Libp2p, db: RawDb, inbox: InboxStore, outbox: OutboxStore, delivery: DeliveryService }

/** A store batch target that fails the synced batches `fail` picks (counted from 1), like a disk error would; unsynced ones (the outbox removals) pass. */
function failing (target: BatchTarget, fail: (n: number) => boolean): BatchTarget {
  let n = 0
  return { batch: async (ops, options) => { if (options.sync && fail(++n)) throw new Error(`batch ${n} failed (test)`); await target.batch(ops, options) } }
}

async function side (dir: string, name: string, early: boolean, fail: (n: number) => boolean = () => false): Promise<Side> {
  const libp2p = await createLibp2p({ addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] }, transports: [tcp()], connectionEncrypters: [noise()], streamMuxers: [yamux()], connectionMonitor: { enabled: false } })
  const db = await openDb(join(dir, name))
  const committer = new Committer(failing(batchTarget(db), fail), 'batch')
  const inbox = new InboxStore(db, committer, 100_000)
  const outbox = new OutboxStore(db, committer, 100_000)
  await outbox.load()
  const delivery = new DeliveryService({
    libp2p,
    committer,
    inbox,
    outbox,
    admission: { admit: async () => null, denied: () => {} },
    notices: { item: (nodeId, context) => ({ nodeId, packetId: ulid(), packet: encodePacket(packetTo(nodeId, context)) }) },
    label: (id) => id,
    log: () => {},
    early
  })
  await delivery.start()
  return { libp2p, db, inbox, outbox, delivery }
}

function packetTo (to: string, text: string): Packet {
  return { id: ulid(), from: FROM, to, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text }, ts: Date.now() }
}

async function until (what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms
  while (!await check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Sends `count` packets in bursts of `burst` calls at once (each burst awaited); the ids sent and whether each send answered durable. */
async function sendAll (a: Side, b: Side, count: number, burst: number): Promise<Array<{ id: string, ok: boolean }>> {
  const dest = b.libp2p.peerId.toString()
  const out: Array<{ id: string, ok: boolean }> = []
  for (let i = 0; i < count; i += burst) {
    const sends = Array.from({ length: Math.min(burst, count - i) }, (_, k) => {
      const p = packetTo(BOB, `m${i + k}`)
      return a.delivery.enqueue(p, encodePacket(p), dest, TTL).then(() => ({ id: p.id, ok: true }), () => ({ id: p.id, ok: false }))
    })
    out.push(...await Promise.all(sends))
  }
  return out
}

async function inboxIds (b: Side): Promise<string[]> {
  return (await b.inbox.read(BOB, 0, 100_000)).map((e) => decodePacket(e.packet).id)
}

describe('delivery - early sending beside the outbox commit, against the reference path', function () {
  this.timeout(120_000)
  let dir: string
  const sides: Side[] = []
  const unhandled: unknown[] = []
  const onUnhandled = (err: unknown): void => { unhandled.push(err) }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'am-early-'))
    unhandled.length = 0
    process.on('unhandledRejection', onUnhandled)
  })

  afterEach(async () => {
    process.off('unhandledRejection', onUnhandled)
    for (const s of sides.splice(0)) {
      await s.delivery.stop()
      await s.libp2p.stop()
      await s.db.close()
    }
    rmSync(dir, { recursive: true, force: true })
  })

  async function pair (early: boolean, fail?: (n: number) => boolean): Promise<[Side, Side]> {
    const b = await side(dir, `b-${String(early)}`, true)
    const a = await side(dir, `a-${String(early)}`, early, fail)
    sides.push(a, b)
    await a.libp2p.dial(b.libp2p.getMultiaddrs()[0])
    return [a, b]
  }

  for (const [count, burst] of [[200, 1], [600, 64]]) {
    it(`early and reference paths deliver the same ${count} packets (bursts of ${burst}), once each, in send order; the outbox ends empty`, async () => {
      const arrived: string[][] = []
      for (const early of [true, false]) {
        const [a, b] = await pair(early)
        const sent = await sendAll(a, b, count, burst)
        assert.ok(sent.every((s) => s.ok))
        await until('every packet in the inbox', async () => (await inboxIds(b)).length >= count)
        await until('the outbox emptied by the acks', async () => a.outbox.depthOf(b.libp2p.peerId.toString()) === 0)
        const ids = await inboxIds(b)
        assert.deepEqual(ids, sent.map((s) => s.id))
        arrived.push(ids.map((_, k) => `#${k}`))
      }
      assert.deepEqual(arrived[0], arrived[1])
      assert.deepEqual(unhandled, [])
    })
  }

  it('early: sends whose outbox commit fails answer their error; every durable one arrives once, in order; acks of the failed ones settle nothing', async () => {
    const [a, b] = await pair(true, (n) => n % 7 === 3)
    const sent = await sendAll(a, b, 300, 8)
    const durable = sent.filter((s) => s.ok).map((s) => s.id)
    assert.ok(durable.length > 0 && durable.length < sent.length, `${durable.length} of ${sent.length} durable`)
    await until('every durable packet in the inbox', async () => { const ids = new Set(await inboxIds(b)); return durable.every((id) => ids.has(id)) })
    await until('the outbox emptied by the acks', async () => a.outbox.depthOf(b.libp2p.peerId.toString()) === 0)
    const ids = await inboxIds(b)
    assert.equal(new Set(ids).size, ids.length, 'no packet stored twice')
    // every durable send arrived, in send order; a failed one may have been sent before its commit failed
    assert.deepEqual(ids.filter((id) => durable.includes(id)), durable)
    const order = new Map(sent.map((s, k) => [s.id, k]))
    assert.deepEqual(ids, [...ids].sort((x, y) => (order.get(x) ?? 0) - (order.get(y) ?? 0)))
    assert.equal((await a.outbox.listFrame(b.libp2p.peerId.toString(), undefined, 1000, 1 << 24)).entries.length, 0)
    assert.deepEqual(unhandled, [])
  })
})
