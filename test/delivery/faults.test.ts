// Limits, TTL and the dedup window on real daemons: each produces its
// documented error or notice, and nothing is dropped silently.
import { strict as assert } from 'node:assert'
import { cpSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ulidTime } from '../../src/store/ulid-time.js'
import { jsonLines, readLog, waitFor } from '../utils/hosts.js'
import { call, duplicates, inboxRows, startPair, status, waitGone, type Pair } from './helpers.js'

interface Dead { packetId: string, code: string, reason: string, to_name: string, from_name: string }

const DEDUP_WINDOW = 10_000

describe('delivery - limits, TTL and dedup window', function () {
  this.timeout(120_000)
  let pair: Pair

  before(async () => {
    pair = await startPair({ a: { outbox_per_destination: 5 }, b: { dedup_window_ms: DEDUP_WINDOW } })
  })
  after(async () => { await pair?.a.cleanup(); await pair?.b.cleanup() })

  it('outbox full: past outbox_per_destination `send` fails with "outbox full for bob"; nothing queued is lost', async () => {
    const { a, b } = pair
    await b.stop()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await call<{ id: string }>(a, 'send', { as: 'alice', to: 'bob', text: `q ${i}` })).id)
    const r = await a.run(['send', '--as', 'alice', 'bob', 'one too many'])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /outbox full for bob/)
    assert.equal((await status(a)).outbox.queued, 5)
    await b.start()
    const rows = await waitFor(async () => { const x = await inboxRows(b, 'bob'); return x.length >= 5 ? x : undefined }, 30_000, 'the queued five')
    assert.deepEqual(rows.map((x) => x.id), ids)
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 10_000, 'outbox to drain')
    assert.ok(!(await inboxRows(b, 'bob')).some((x) => x.payload.text === 'one too many'))
  })

  it('TTL expiry and the dedup window: dead letters with TTL_EXPIRED / STALE_PACKET, an ERROR notice to the sender naming message and target, never delivered', async () => {
    const { a, b } = pair
    await b.stop()
    const staleId = (await call<{ id: string }>(a, 'send', { as: 'alice', to: 'bob', text: 'older than the dedup window' })).id
    const sent = JSON.parse(await a.ok(['send', '--as', 'alice', 'bob', 'short-lived', '--ttl', '1s', '--json'])) as { id: string }
    const deadOf = async (id: string): Promise<Dead | undefined> => jsonLines<Dead>(await a.ok(['outbox', '--dead', '--json'])).find((d) => d.packetId === id)
    const dead = await waitFor(async () => await deadOf(sent.id), 15_000, 'the TTL dead letter')
    assert.equal(dead.code, 'TTL_EXPIRED')
    assert.equal(dead.to_name, 'bob')
    assert.equal(dead.from_name, 'alice')
    const notices = (await inboxRows(a, 'alice')).filter((x) => x.signal === 'ERROR')
    assert.equal(notices.length, 1)
    assert.equal(notices[0].in_reply_to, sent.id)
    assert.match(notices[0].payload.context ?? '', new RegExp(`message ${sent.id} to bob was not delivered: TTL_EXPIRED`))
    // let the other one age past the receiver's dedup window, then bring the receiver back
    await waitFor(async () => Date.now() > ulidTime(staleId) + DEDUP_WINDOW + 500 || undefined, DEDUP_WINDOW + 5_000, 'the packet to age')
    await b.start()
    const stale = await waitFor(async () => await deadOf(staleId), 30_000, 'the stale dead letter')
    assert.equal(stale.code, 'STALE_PACKET')
    const fresh = (await call<{ id: string }>(a, 'send', { as: 'alice', to: 'bob', text: 'fresh' })).id
    await waitFor(async () => (await inboxRows(b, 'bob')).some((x) => x.id === fresh) || undefined, 30_000, 'a fresh message to pass')
    const texts = (await inboxRows(b, 'bob')).map((x) => x.payload.text)
    assert.ok(!texts.includes('short-lived') && !texts.includes('older than the dedup window'), 'expired and stale packets are never delivered')
    const all = (await inboxRows(a, 'alice')).filter((x) => x.signal === 'ERROR')
    assert.equal(all.length, 2)
    assert.match(all[1].payload.context ?? '', new RegExp(`message ${staleId} to bob was not delivered: STALE_PACKET`))
    const st = await status(a)
    assert.equal(st.outbox.dead, 2)
    assert.equal(st.outbox.queued, 0)
  })
})

describe('delivery - dedup across a receiver restart', function () {
  this.timeout(120_000)
  let pair: Pair

  before(async () => { pair = await startPair() })
  after(async () => { await pair?.a.cleanup(); await pair?.b.cleanup() })

  it('packets delivered before a receiver kill -9 and resent after its restart (sender store rolled back) are acked as duplicates, not stored twice', async () => {
    const { a, b } = pair
    await b.stop()
    const ids: string[] = []
    for (let i = 0; i < 20; i++) ids.push((await call<{ id: string }>(a, 'send', { as: 'alice', to: 'bob', text: `d ${i}` })).id)
    await a.stop()
    const backup = join(a.home, 'store.bak')
    cpSync(join(a.home, 'store'), backup, { recursive: true })
    await a.start()
    await b.start()
    await waitFor(async () => (await inboxRows(b, 'bob')).length >= 20 || undefined, 30_000, 'first delivery')
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 10_000, 'outbox to drain')
    const first = await inboxRows(b, 'bob')
    assert.deepEqual(first.map((x) => x.id), ids)

    // the receiver crashes and restarts (its retention pass runs at start); the
    // sender comes back with an outbox that still holds all 20
    b.kill9()
    await waitGone(b.pid)
    await a.stop()
    rmSync(join(a.home, 'store'), { recursive: true, force: true })
    cpSync(backup, join(a.home, 'store'), { recursive: true })
    await b.start()
    await waitFor(async () => readLog(b).split('retention pass').length >= 3 || undefined, 10_000, 'the retention pass after restart')
    // the sender's restored queue is counted while the receiver is away (with
    // it up, the resends can be acked before the first status call)
    await b.stop()
    await a.start()
    assert.equal((await status(a)).outbox.queued, 20, 'the rolled-back sender resends all 20')
    await b.start()
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 30_000, 'the resends to be acked')
    const after = await inboxRows(b, 'bob')
    assert.deepEqual(after.map((x) => x.id), ids, 'each exactly once, same seqs')
    assert.deepEqual(after.map((x) => x.seq), first.map((x) => x.seq))
    assert.deepEqual(duplicates(after.map((x) => x.id)), [])
    assert.equal((await status(a)).outbox.dead, 0, 'acked as duplicates, not refused')
  })
})
