import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type BatchTarget, type RawDb } from '../../src/store/db.js'
import { InboxStore, decodeInboxValue, type AppendItem, type AppendResult, type IdMemoryOf } from '../../src/store/inbox.js'
import { OneMapIds, TwoMapIds, type Known } from '../../src/store/inbox-ids.js'
import { ulidTimePrefix } from '../../src/store/ulid-time.js'
import { ulid } from '../../src/util/ulid.js'

const A = 'did:key:zNodeA'
const B = 'did:key:zNodeB'
const HOUR = 3_600_000
/** a small id memory, so the runs below evict from it many times over */
const LIMIT = 7

/** One inbox over its own real LevelDB, with a store write that can be made to fail. */
interface Side { db: RawDb, inbox: InboxStore, fail: { next: boolean }, open: () => Promise<void> }

async function side (dir: string, memory: IdMemoryOf): Promise<Side> {
  const fail = { next: false }
  const s: Side = {
    db: undefined as unknown as RawDb,
    inbox: undefined as unknown as InboxStore,
    fail,
    open: async () => {
      s.db = await openDb(dir)
      const real = batchTarget(s.db)
      const target: BatchTarget = {
        batch: async (ops, options) => {
          if (fail.next) { fail.next = false; throw new Error('injected write failure') }
          await real.batch(ops, options)
        }
      }
      s.inbox = new InboxStore(s.db, new Committer(target, 'batch'), 40, HOUR, memory)
    }
  }
  await s.open()
  return s
}

/** Everything a store holds, with each inbox value's receive time left out (the two sides append at different moments). */
async function contents (db: RawDb): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = []
  for await (const [key, value] of db.iterator()) {
    const shown = key.startsWith('i!') ? Buffer.from(decodeInboxValue(value).p).toString('hex') : Buffer.from(value).toString('hex')
    out.push([key, shown])
  }
  return out
}

const item = (nodeId: string, packetId: string, i: number): AppendItem => ({ nodeId, packetId, packet: Buffer.from(`${nodeId}:${packetId}:${i}`) })

describe('store - inbox id memory: OneMapIds against its reference TwoMapIds', () => {
  let dir: string
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'am-inbox-ids-')) })
  afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

  it('the same answers and the same store over appends with duplicates (in a call, across calls, in flight, evicted, after a reopen), failed writes, a full inbox and stale ids', async () => {
    const ref = await side(join(dir, 'ref'), (_limit, onEvict) => new TwoMapIds(LIMIT, onEvict))
    const one = await side(join(dir, 'one'), (_limit, onEvict) => new OneMapIds(LIMIT, onEvict))
    const sides = [ref, one]
    try {
      const ids: string[] = Array.from({ length: 60 }, () => ulid())
      const stale = ulidTimePrefix(Date.now() - 2 * HOUR) + '0000000000000000'
      let i = 0
      /** one step on both sides: the same calls (concurrent ones started together), then the answers compared */
      const step = async (calls: AppendItem[][], failFirst = false): Promise<void> => {
        const answers: AppendResult[][][] = []
        for (const s of sides) {
          s.fail.next = failFirst
          const settled = await Promise.allSettled(calls.map(async (c) => await s.inbox.append(c)))
          answers.push(settled.map((r) => r.status === 'fulfilled' ? r.value : [{ error: new Error('rejected') } as unknown as AppendResult]))
        }
        assert.deepEqual(answers[1].map(shape), answers[0].map(shape), `step ${i}`)
        i++
      }
      const shape = (rs: AppendResult[]): unknown[] => rs.map((r) => 'error' in r ? r.error.message.replace(/\d{4,}/g, 'N') : r)
      await step([[item(A, ids[0], 0), item(A, ids[1], 1), item(A, ids[0], 2)]]) // a duplicate within a call
      await step([[item(A, ids[1], 3), item(B, ids[2], 4)]]) // across calls
      await step([[item(A, ids[3], 5), item(A, ids[4], 6)], [item(A, ids[4], 7), item(B, ids[3], 8)]]) // in flight in another call
      await step([[item(A, ids[5], 9)], [item(A, ids[5], 10)]], true) // the first write fails: its ids are forgotten, the waiter answers as before
      await step([[item(A, ids[5], 11), item(B, ids[6], 12)]]) // resent after the failure
      for (let k = 7; k < 40; k += 3) await step([[item(A, ids[k], k), item(B, ids[k + 1], k), item(A, ids[k + 2], k)]]) // past the memory's limit
      await step([[item(A, ids[0], 40), item(B, ids[2], 41), item(A, ids[39], 42), item(A, ids[40], 43)]]) // evicted ids: from the store
      await step([[item(A, stale, 44), item(B, ids[41], 45)]]) // a stale id
      await step([Array.from({ length: 30 }, (_, k) => item(A, ids[42 + (k % 15)], 46 + k))]) // the inbox of A fills up
      for (const s of sides) { await s.db.close(); await s.open() }
      await step([[item(A, ids[1], 80), item(B, ids[20], 81), item(B, ulid(), 82)]]) // after a reopen: memory is empty, the floor from the store
      assert.deepEqual(await contents(one.db), await contents(ref.db))
    } finally {
      for (const s of sides) await s.db.close()
    }
  })

  it('OneMapIds keeps one entry object from staging to eviction, and evicts the oldest durable ids first', () => {
    const evicted: string[] = []
    const m = new OneMapIds(2, (id) => evicted.push(id))
    const done = Promise.resolve()
    const staged: Known[] = ['a', 'b', 'c'].map((id, k) => m.stage(id, A, k + 1, done))
    assert.equal(m.get('b')?.done, done)
    m.settle(['a', 'b', 'c'], staged, true)
    assert.deepEqual(evicted, ['a'])
    assert.equal(m.get('b'), staged[1])
    assert.equal(m.get('b')?.done, undefined)
    const d = m.stage('d', B, 9, done)
    m.settle(['d'], [d], false)
    assert.equal(m.has('d'), false)
    assert.deepEqual(evicted, ['a'])
    assert.throws(() => new OneMapIds(0, () => {}), RangeError)
  })
})
