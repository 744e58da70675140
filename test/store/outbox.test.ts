import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { hex, hexReference, OutboxStore, SETTLED_KEYS } from '../../src/store/outbox.js'
import { ulid } from '../../src/util/ulid.js'

const P1 = '12D3KooWPeerOne'
const P2 = '12D3KooWPeerTwo'
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)
const text = (b: Uint8Array): string => new TextDecoder().decode(b)

describe('store - outbox key digits', () => {
  it('hex gives hexReference for every width keys use and any number', () => {
    const ns = [0, 1, 15, 16, 255, 256, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 48 - 1, 2 ** 48, 2 ** 53 - 1, 2 ** 53, 2 ** 60 + 2 ** 40, 2 ** 64, 1e30,
      Date.now(), Date.now() + 7 * 86_400_000, 1.5, 0.2, -0, -0.5, -1, -(2 ** 40), NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE]
    for (let k = 0; k < 2000; k++) ns.push(Math.floor(Math.random() * 2 ** 53), Math.random() * 2 ** 32, Math.floor(Math.random() * 2 ** 20))
    for (const w of [1, 2, 7, 8, 9, 12, 15, 16, 0, 17, 20, 12.5]) {
      for (const n of ns) assert.equal(hex(n, w), hexReference(n, w), `hex(${n}, ${w})`)
    }
  })
})

describe('store - OutboxStore', () => {
  let dir: string
  let db: RawDb
  let committer: Committer
  let outbox: OutboxStore

  const open = async (cap = 100): Promise<void> => {
    db = await openDb(join(dir, 'store'))
    committer = new Committer(batchTarget(db), 'batch')
    outbox = new OutboxStore(db, committer, cap)
    await outbox.load()
  }
  const reopen = async (cap?: number): Promise<void> => { await db.close(); await open(cap) }
  const enqueue = async (dest: string, t: string, exp = Date.now() + 60_000): Promise<string> => {
    const id = ulid()
    await committer.write(outbox.prepare(dest, id, 'did:key:zTo', 'bob', 'did:key:zFrom', exp, bytes(t)))
    return id
  }

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-outbox-')); await open() })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('queues - per destination, in enqueue order (not packet-id order), depths survive a reopen and keys keep growing', async () => {
    const late = ulid() // minted first, enqueued last: queue order must follow the commit
    await enqueue(P1, 'a'); await enqueue(P2, 'x'); await enqueue(P1, 'b')
    await committer.write(outbox.prepare(P1, late, 'did:key:zTo', 'bob', 'did:key:zFrom', Date.now() + 60_000, bytes('c')))
    await reopen()
    assert.deepEqual(outbox.totals(), { queued: 4, dead: 0, byDestination: { [P1]: 3, [P2]: 1 } })
    await enqueue(P1, 'd')
    const q = await outbox.list(P1, undefined, 10)
    assert.deepEqual(q.map((e) => text(e.packet)), ['a', 'b', 'c', 'd'])
    assert.equal(q[2].packetId, late)
    const rest = await outbox.list(P1, q[1].key, 10)
    assert.deepEqual(rest.map((e) => text(e.packet)), ['c', 'd'])
  })

  it('cap - past outbox_per_destination prepare throws OUTBOX_FULL naming the node; other destinations unaffected; room comes back on delivery', async () => {
    await reopen(2)
    await enqueue(P1, 'a'); await enqueue(P1, 'b')
    assert.throws(() => outbox.prepare(P1, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', Date.now() + 1000, bytes('c')), (err: Error & { code?: string }) => {
      assert.equal(err.name, 'OutboxFullError')
      assert.equal(err.code, 'OUTBOX_FULL')
      assert.match(err.message, /^outbox full for bob: 2 packets already wait for its host \(limit 2\)$/)
      return true
    })
    await enqueue(P2, 'x')
    await outbox.remove((await outbox.list(P1, undefined, 1)))
    await enqueue(P1, 'c')
    assert.equal(outbox.depthOf(P1), 2)
  })

  it('expiry index - expired() finds exactly the entries due, oldest first, skipping busy ones, and forgets settled ones', async () => {
    const now = Date.now()
    await enqueue(P1, 'late', now + 60_000)
    await enqueue(P1, 'due2', now - 10)
    await enqueue(P2, 'due1', now - 20)
    await enqueue(P1, 'due3', now)
    const due = await outbox.expired(now, 10)
    assert.deepEqual(due.map((e) => text(e.packet)), ['due1', 'due2', 'due3'])
    assert.deepEqual((await outbox.expired(now, 10, (e) => text(e.packet) === 'due2')).map((e) => text(e.packet)), ['due1', 'due3'])
    assert.deepEqual((await outbox.expired(now, 2)).length, 2)
    await outbox.remove([due[0]])
    assert.deepEqual((await outbox.expired(now, 10)).map((e) => text(e.packet)), ['due2', 'due3'])
  })

  it('settle - an entry is delivered or dead exactly once, even when an ack and the TTL sweep race', async () => {
    await enqueue(P1, 'a')
    const [e] = await outbox.list(P1, undefined, 1)
    const [removed, killed] = await Promise.all([outbox.remove([e]), outbox.kill([{ entry: e, code: 'TTL_EXPIRED', reason: 'late' }])])
    assert.equal(removed, 1)
    assert.deepEqual(killed, [], 'already delivered: not a dead letter')
    assert.equal(outbox.depthOf(P1), 0)
    assert.equal(outbox.totals().dead, 0)
    await enqueue(P1, 'b')
    const [f] = await outbox.list(P1, undefined, 1)
    const [k2, r2] = await Promise.all([outbox.kill([{ entry: f, code: 'TTL_EXPIRED', reason: 'late' }]), outbox.remove([f])])
    assert.equal(k2.length, 1)
    assert.equal(r2, 0)
    assert.equal(outbox.depthOf(P1), 0)
  })

  it('dead letters - inspectable with code and reason, counted across a reopen, pruned by age', async () => {
    const id = await enqueue(P1, 'a')
    const [e] = await outbox.list(P1, undefined, 1)
    await outbox.kill([{ entry: e, code: 'TTL_EXPIRED', reason: 'not acknowledged' }])
    await reopen()
    const [d] = await outbox.deadLetters(10)
    assert.equal(d.packetId, id)
    assert.equal(d.code, 'TTL_EXPIRED')
    assert.equal(text(d.packet), 'a')
    assert.deepEqual(outbox.totals(), { queued: 0, dead: 1, byDestination: {} })
    assert.equal(await outbox.pruneDead(d.at), 0, 'not older than its own death')
    assert.equal(await outbox.pruneDead(d.at + 1), 1)
    assert.equal(outbox.totals().dead, 0)
    assert.deepEqual(await outbox.deadLetters(10), [])
  })

  it('listFrame - stops at the entry count or the byte budget (the first entry always fits) and says whether it reached the end of the queue', async () => {
    for (const t of ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']) await enqueue(P1, t)
    await enqueue(P2, 'zzzz')
    const all = await outbox.listFrame(P1, undefined, 10, 1000)
    assert.deepEqual(all.entries.map((e) => text(e.packet)), ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee'])
    assert.equal(all.complete, true)
    const exact = await outbox.listFrame(P1, undefined, 5, 1000)
    assert.equal(exact.entries.length, 5)
    assert.equal(exact.complete, true, 'exactly `limit` left: the read saw the end')
    const byCount = await outbox.listFrame(P1, undefined, 2, 1000)
    assert.deepEqual(byCount.entries.map((e) => text(e.packet)), ['aaaa', 'bbbb'])
    assert.equal(byCount.complete, false)
    const byBytes = await outbox.listFrame(P1, all.entries[0].key, 10, 9)
    assert.deepEqual(byBytes.entries.map((e) => text(e.packet)), ['bbbb', 'cccc'])
    assert.equal(byBytes.complete, false)
    const oversized = await outbox.listFrame(P1, all.entries[2].key, 10, 1)
    assert.deepEqual(oversized.entries.map((e) => text(e.packet)), ['dddd'], 'one entry over the budget still makes a frame')
    assert.equal(oversized.complete, false)
    const tail = await outbox.listFrame(P1, all.entries[4].key, 10, 1000)
    assert.deepEqual(tail, { entries: [], complete: true })
  })

  it('remove - delivered entries are deleted in an unsynced write beside the group commit; gone after a reopen', async () => {
    const syncs: boolean[] = []
    const target = batchTarget(db)
    committer = new Committer({ batch: async (ops, o) => { syncs.push(o.sync); await target.batch(ops, o) } }, 'batch')
    outbox = new OutboxStore(db, committer, 100)
    await outbox.load()
    await enqueue(P1, 'a'); await enqueue(P1, 'b')
    assert.deepEqual(syncs, [true, true])
    const q = await outbox.list(P1, undefined, 10)
    assert.equal(await outbox.remove(q), 2)
    assert.deepEqual(syncs, [true, true, false])
    assert.equal(outbox.depthOf(P1), 0)
    assert.equal(await outbox.remove(q), 0, 'already removed: nothing written')
    assert.deepEqual(syncs, [true, true, false])
    await reopen()
    assert.deepEqual(await outbox.list(P1, undefined, 10), [])
    assert.deepEqual(outbox.totals(), { queued: 0, dead: 0, byDestination: {} })
    assert.deepEqual(await outbox.expired(Date.now() + 3_600_000, 10), [], 'the expiry index went with them')
  })

  it('settle - an entry read before it was settled (a resend after a reconnect, a sweep racing an ack) is never settled twice, also once its key has left the in-memory record', async () => {
    await reopen(100_000)
    await enqueue(P1, 'a'); await enqueue(P1, 'b'); await enqueue(P1, 'c')
    const early = await outbox.list(P1, undefined, 10) // read before any settle
    const [a, b, c] = await outbox.list(P1, undefined, 10)
    assert.equal(await outbox.remove([a]), 1)
    assert.equal(await outbox.remove([early[0]]), 0, 'the removed entry, read earlier, is not removed again')
    assert.deepEqual(await outbox.kill([{ entry: early[0], code: 'TTL_EXPIRED', reason: 'late' }]), [], 'nor killed')
    assert.equal((await outbox.kill([{ entry: b, code: 'NO_GRANT', reason: 'no' }])).length, 1)
    assert.equal(await outbox.remove([early[1]]), 0, 'a dead entry read earlier is not removed')
    assert.equal(outbox.depthOf(P1), 1)
    assert.equal(outbox.totals().dead, 1)
    // settle more keys than are remembered: the early copies are then checked in the store
    const ops = []
    for (let k = 0; k < SETTLED_KEYS + 10; k++) ops.push(...outbox.prepare(P2, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', Date.now() + 60_000, bytes(`m${k}`)))
    await committer.write(ops)
    const bulk = await outbox.list(P2, undefined, SETTLED_KEYS + 10)
    for (let k = 0; k < bulk.length; k += 1000) assert.equal(await outbox.remove(bulk.slice(k, k + 1000)), Math.min(1000, bulk.length - k))
    assert.equal(outbox.depthOf(P2), 0)
    assert.equal(await outbox.remove(bulk.slice(0, 5)), 0, 'settled long ago: the store says so')
    assert.equal(await outbox.remove([early[0], early[1]]), 0)
    assert.deepEqual(await outbox.kill([{ entry: early[0], code: 'TTL_EXPIRED', reason: 'late' }]), [])
    assert.equal(await outbox.remove([early[2]]), 1, 'still queued: removed (answered by the store)')
    assert.equal(await outbox.remove([c]), 0)
    assert.deepEqual(outbox.totals(), { queued: 0, dead: 1, byDestination: {} })
    await reopen()
    assert.deepEqual(outbox.totals(), { queued: 0, dead: 1, byDestination: {} })
  })
})
