import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { ReceiptStore, deliveredOps, stateOp, type SentMeta } from '../../src/store/receipts.js'
import { DELIVERED_WINDOW_MS, batchValue, batchValueReference, type DeliveredItem } from '../../src/store/receipt-batches.js'
import { ulidTimePrefix } from '../../src/store/ulid-time.js'

// The delivered records of one ack batch in one op (receipt-batches.ts) must
// answer every lookup exactly as the per-id records (the reference path,
// stateOp per message) do, also after a reopen and beside other states.

const PEER = '12D3KooWLaX8H1y5hV1RjXy6oP4mZ6Y8k4Ff1eXgXz7Q8q9pLmNo'
let serial = 0
/** a ULID minted at `ms` (util/ulid.ts is monotonic: it would not go back in time) */
function ulid (ms: number): string { return ulidTimePrefix(ms) + String(++serial).padStart(16, '0') }

const META: SentMeta = { to: 'did:key:zTo', from: 'did:key:zFrom', dest: PEER, q: 1000 }

async function open (dir: string, name: string): Promise<{ db: RawDb, committer: Committer, store: ReceiptStore }> {
  const db = await openDb(join(dir, name))
  const committer = new Committer(batchTarget(db), 'batch')
  return { db, committer, store: new ReceiptStore(db, committer) }
}

describe('store - delivered records of one ack batch', () => {
  let dir: string
  let dbs: RawDb[] = []

  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'amesh-receipt-batches-')) })
  afterEach(async () => {
    for (const db of dbs) await db.close()
    dbs = []
    rmSync(dir, { recursive: true, force: true })
  })

  it('one op for the messages acked within the window; every lookup answers as the per-id records do, also after a reopen', async () => {
    const now = Date.now()
    const items = [
      ...Array.from({ length: 200 }, (_, i) => ({ id: ulid(now - 5 - i), meta: { ...META, to: `did:key:zTo${i % 7}`, q: now - 5 - i } })),
      { id: ulid(now - 1), meta: { ...META, off: true } },
      { id: ulid(now - 2), meta: { to: 'did:key:zä€𝄞', from: META.from, dest: 'local' } },
      { id: ulid(now - DELIVERED_WINDOW_MS - 1000), meta: META }, // acked late: its own record
      { id: 'not-a-ulid', meta: META },
      { id: ulid(now + 5000), meta: META } // minted after the ack (a clock step): its own record
    ]
    const ref = await open(dir, 'ref')
    const fast = await open(dir, 'fast')
    dbs.push(ref.db, fast.db)
    await ref.committer.write(items.map((i) => stateOp({ id: i.id, state: 'delivered', at: now, meta: i.meta })))
    const ops = deliveredOps(items, now)
    assert.equal(ops.length, 4, 'one batch record and three per-id records')
    await fast.committer.write(ops)
    const later = [{ id: items[3].id, state: 'pushed' as const, at: now + 1 }, { id: items[3].id, state: 'read' as const, at: now + 2 }, { id: items[9].id, state: 'refused' as const, at: now + 3, reason: 'X: y', meta: items[9].meta }]
    for (const s of [ref, fast]) await s.store.record(later, true)
    const outsiders = [ulid(now - 50), ulid(now - 10_000), ulid(now - 30_000), 'nothing']
    const ids = [...items.map((i) => i.id), ...outsiders]
    for (const id of ids) assert.deepEqual(await fast.store.records(id), await ref.store.records(id), id)
    assert.deepEqual((await fast.store.records(outsiders[0])).events, [], 'an id inside the batch range but not in it')
    await fast.db.close()
    dbs = [ref.db]
    const again = await open(dir, 'fast')
    dbs.push(again.db)
    for (const id of ids) assert.deepEqual(await again.store.records(id), await ref.store.records(id), `${id} after a reopen`)
  })

  it('a batch that does not fit the layout (a string over 255 bytes) is written as per-id records', async () => {
    const now = Date.now()
    const items = [{ id: ulid(now - 1), meta: { ...META, to: 'x'.repeat(300) } }, { id: ulid(now - 2), meta: META }]
    const ops = deliveredOps(items, now)
    assert.deepEqual(ops.map((o) => o.key), items.map((i) => `h!${i.id}!delivered`))
    const s = await open(dir, 'fit')
    dbs.push(s.db)
    await s.committer.write(ops)
    assert.equal((await s.store.records(items[0].id)).meta?.to, 'x'.repeat(300))
  })
})

describe('store - delivered batch value against its reference', () => {
  const ids = (n: number): string[] => Array.from({ length: n }, () => ulid(Date.now()))
  const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]
  const same = (items: DeliveredItem[]): void => {
    const at = Date.now()
    const got = batchValue(at, items)
    const ref = batchValueReference(at, items)
    if (ref === undefined) assert.equal(got, undefined)
    else assert.deepEqual(Buffer.from(got as Uint8Array), Buffer.from(ref))
  }

  it('is byte for byte the reference for runs of repeated and changing targets, senders, hosts, flags', () => {
    const tos = ['did:key:zTo1', 'did:key:zTo2', 'é-node', 'x'.repeat(255)]
    const froms = ['did:key:zFrom', 'did:key:zFrom2', 'did:key:zTo1']
    const dests = ['12D3KooWPeerOne', '12D3KooWPeerTwo', 'local']
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(Math.random() * 300)
      let meta: SentMeta = { to: pick(tos), from: pick(froms), dest: pick(dests), q: Date.now() }
      const items: DeliveredItem[] = ids(n).map((id) => {
        if (Math.random() < 0.1) meta = { to: pick(tos), from: pick(froms), dest: pick(dests), ...(Math.random() < 0.5 ? { q: Date.now() - Math.random() * 1000 } : {}), ...(Math.random() < 0.3 ? { off: true } : {}) }
        return { id, meta: Math.random() < 0.5 ? meta : { ...meta } }
      })
      same(items)
    }
  })

  it('gives up exactly where the reference does: a string over 255 bytes, more than 255 strings', () => {
    const base = { from: 'did:key:zFrom', dest: '12D3KooWPeerOne', q: 1 }
    same(ids(3).map((id, k) => ({ id, meta: { ...base, to: k === 2 ? 'é'.repeat(128) : 'did:key:zTo' } })))
    same(ids(300).map((id, k) => ({ id, meta: { ...base, to: `did:key:z${k}` } })))
    same(ids(253).map((id, k) => ({ id, meta: { ...base, to: `did:key:z${k}` } })))
    same(ids(254).map((id, k) => ({ id, meta: { ...base, to: `did:key:z${k}` } })))
  })
})
