import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, toJsonBytes, type RawDb } from '../../src/store/db.js'
import { OutboxStore } from '../../src/store/outbox.js'
import { ReceiptStore, stateOp } from '../../src/store/receipts.js'
import { decodeRecord, jsonRecordValue, recordValue, type HistoryRecord } from '../../src/store/receipt-values.js'
import { ulid } from '../../src/util/ulid.js'

const META = { to: 'did:key:zTo', from: 'did:key:zFrom', dest: '12D3KooWPeer', q: 1000 }

describe('store - receipt records', () => {
  let dir: string
  let db: RawDb
  let committer: Committer
  let store: ReceiptStore

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'amesh-receipts-'))
    db = await openDb(join(dir, 'store'))
    committer = new Committer(batchTarget(db), 'batch')
    store = new ReceiptStore(db, committer)
  })
  afterEach(async () => {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('records - one append-only key per state, read back by one prefix scan, after a reopen; a repeated receipt overwrites only its own key', async () => {
    const id = ulid()
    await store.record([{ id, state: 'delivered', at: 2000, meta: META }], false)
    await store.record([{ id, state: 'pushed', at: 3000 }, { id, state: 'read', at: 4000 }], true)
    await store.record([{ id, state: 'read', at: 4000 }], true)
    const keys: string[] = []
    for await (const k of db.keys({ gt: 'h!', lt: 'h!\xff' })) keys.push(k)
    assert.deepEqual(keys, [`h!${id}!delivered`, `h!${id}!pushed`, `h!${id}!read`])
    await db.close()
    db = await openDb(join(dir, 'store'))
    store = new ReceiptStore(db, new Committer(batchTarget(db), 'batch'))
    const r = await store.records(id)
    assert.deepEqual(r.meta, META)
    assert.deepEqual(r.events, [{ state: 'delivered', at: 2000 }, { state: 'pushed', at: 3000 }, { state: 'read', at: 4000 }])
  })

  it('records - states of one call go in one batch; nothing of another id whose key sorts in between is read', async () => {
    const before = committer.stats.batches
    await store.record([{ id: 'ab', state: 'pushed', at: 1 }, { id: 'ab', state: 'read', at: 2 }, { id: 'cd', state: 'read', at: 3 }], true)
    assert.equal(committer.stats.batches - before, 1)
    await committer.write([stateOp({ id: 'ab c', state: 'read', at: 9 })])
    assert.deepEqual((await store.records('ab')).events.map((e) => e.state), ['pushed', 'read'])
    assert.deepEqual((await store.records('nothing')).events, [])
  })

  it('records - a history of the earlier layout (one JSON under h!<id>) is still read', async () => {
    const id = ulid()
    const old = { id, ...META, events: [{ state: 'queued', at: 1000 }, { state: 'delivered', at: 2000 }] }
    await committer.write([{ type: 'put', key: `h!${id}`, value: toJsonBytes(old) }])
    const r = await store.records(id)
    assert.equal(r.meta?.q, 1000)
    assert.equal(r.meta?.dest, META.dest)
    assert.deepEqual(r.events, [{ state: 'delivered', at: 2000 }])
  })

  it('outbox remove - the extra ops (the delivered records) land in the removal batch, only for entries still queued', async () => {
    const outbox = new OutboxStore(db, committer, 100)
    await outbox.load()
    const id = ulid()
    const { ops, entry } = outbox.stage('12D3KooWPeer', id, META.to, 'bob', META.from, Date.now() + 60_000, new Uint8Array([1]))
    await committer.write(ops)
    const before = committer.stats.batches
    const extra = (live: Array<{ packetId: string }>): ReturnType<typeof stateOp>[] => live.map((e) => stateOp({ id: e.packetId, state: 'delivered', at: 5, meta: META }))
    assert.equal(await outbox.remove([entry], { extra }), 1)
    assert.equal(committer.stats.batches - before, 1, 'one batch: the removal and the record')
    assert.equal((await store.records(id)).events.length, 1)
    assert.equal(await outbox.remove([entry], { extra: () => { throw new Error('not called for a settled entry') } }), 0)
  })

  it('record values - the binary layout reads back what the JSON layout does (every flag, UTF-8, long strings fall back to JSON); both are read', async () => {
    const peer = '12D3KooWLaX8H1y5hV1RjXy6oP4mZ6Y8k4Ff1eXgXz7Q8q9pLmNo'
    const records: HistoryRecord[] = [
      { at: 1_764_590_000_123 },
      { at: 5, m: META },
      { at: 6, m: { to: META.to, from: META.from, dest: 'local' } },
      { at: 7, m: { ...META, off: true } },
      { at: 8, reason: 'TTL_EXPIRED: not acknowledged by host ' + peer, m: { to: 'did:key:zä€𝄞', from: META.from, dest: peer, q: 0 } },
      { at: 9, reason: '' },
      { at: 10, m: { to: 'x'.repeat(300), from: META.from, dest: peer } }
    ]
    for (const rec of records) {
      const fast = recordValue(rec)
      assert.deepEqual(decodeRecord(fast), decodeRecord(jsonRecordValue(rec)), JSON.stringify(rec))
      assert.deepEqual(decodeRecord(fast), rec)
    }
    assert.equal(recordValue(records[1])[0], 1, 'format 1')
    assert.equal(recordValue(records[6])[0], '{'.charCodeAt(0), 'a string over 255 bytes: JSON')
    const id = ulid()
    await committer.write([{ type: 'put', key: `h!${id}!delivered`, value: toJsonBytes({ at: 2000, m: META }) }])
    await store.record([{ id, state: 'read', at: 3000 }], true)
    const r = await store.records(id)
    assert.deepEqual(r.meta, META, 'a JSON record of the earlier layout beside a binary one')
    assert.deepEqual(r.events, [{ state: 'delivered', at: 2000 }, { state: 'read', at: 3000 }])
  })
})
