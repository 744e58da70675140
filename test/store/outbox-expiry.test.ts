// The outbox's expiry index written late (src/store/outbox-expiry.ts), over a
// real LevelDB: which records exist when, what expired() finds, and the repair
// of a store a crash left with late entries.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { expiryKey } from '../../src/store/outbox-keys.js'
import { INDEX_AFTER, INDEX_CHUNK, LateIndex } from '../../src/store/outbox-expiry.js'
import { OutboxStore, type OutboxEntry } from '../../src/store/outbox.js'
import { ulid } from '../../src/util/ulid.js'

const PEER = '12D3KooWFADrb4yvBdo6w9G9g7kJ5grumFtRiCKDir6Xn8BCoXLx'

interface Store { db: RawDb, committer: Committer, outbox: OutboxStore }

/** A LevelDB in a temporary directory, opened (and reopened) as a host's outbox; closed and removed after fn, also when it fails. */
async function withStore (fn: (open: () => Promise<Store>) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'am-outbox-expiry-'))
  let db: RawDb | undefined
  const open = async (): Promise<Store> => {
    if (db !== undefined) await db.close()
    db = await openDb(join(dir, 'store'))
    const committer = new Committer(batchTarget(db), 'batch')
    const outbox = new OutboxStore(db, committer, 100_000)
    await outbox.load()
    return { db, committer, outbox }
  }
  try {
    await fn(open)
  } finally {
    await db?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function keysUnder (db: RawDb, prefix: string): Promise<string[]> {
  const out: string[] = []
  for await (const k of db.keys({ gt: prefix, lt: prefix + '\xff' })) out.push(k)
  return out
}

/** Stage and commit n entries (one write each, as sends are), expiring at exp(k). */
async function queue (s: Store, n: number, exp: (k: number) => number): Promise<OutboxEntry[]> {
  const staged = Array.from({ length: n }, (_, k) => s.outbox.stage(PEER, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', exp(k), new Uint8Array([k & 0xff])))
  await Promise.all(staged.map(async (x) => { await s.committer.write(x.ops) }))
  return staged.map((x) => x.entry)
}

async function settle (s: Store): Promise<void> {
  await s.committer.drain()
  await new Promise((resolve) => setImmediate(resolve))
  await s.committer.drain()
}

describe('store - outbox expiry index, written late', () => {
  it('entries removed while late never get an index record, and their removal writes none', async () => {
    await withStore(async (open) => {
      const s = await open()
      const entries = await queue(s, 300, () => Date.now() + 60_000)
      assert.deepEqual(await keysUnder(s.db, 'e!'), [], 'no record while they are late')
      assert.equal(await s.outbox.remove(entries), 300)
      await settle(s)
      assert.deepEqual(await keysUnder(s.db, 'o!'), [])
      assert.deepEqual(await keysUnder(s.db, 'e!'), [])
      assert.equal(await s.outbox.remove(entries), 0, 'removed once')
      assert.equal(s.outbox.depthOf(PEER), 0)
    })
  })

  it(`past ${INDEX_AFTER} late entries the oldest ${INDEX_CHUNK} get their records; removing them deletes the records`, async () => {
    await withStore(async (open) => {
      const s = await open()
      const exp = Date.now() + 60_000
      const entries = await queue(s, INDEX_AFTER + 1, () => exp)
      await settle(s)
      const indexed = entries.slice(0, INDEX_CHUNK)
      assert.deepEqual((await keysUnder(s.db, 'e!')).sort(), indexed.map((e) => expiryKey(exp, e.key)).sort(), 'exactly the oldest chunk')
      assert.equal(await s.outbox.remove(entries), INDEX_AFTER + 1)
      await settle(s)
      assert.deepEqual(await keysUnder(s.db, 'e!'), [], 'their records went with them')
      assert.deepEqual(await keysUnder(s.db, 'o!'), [])
    })
  })

  it('expired() finds late and indexed entries due, oldest expiry first, passes over skipped ones; dead letters leave nothing behind', async () => {
    await withStore(async (open) => {
      const s = await open()
      const now = Date.now()
      // oldest chunk indexed (expiring last), the rest late, half of them due
      const entries = await queue(s, INDEX_AFTER + 1, (k) => k < INDEX_CHUNK ? now + 10_000 + k : k % 2 === 0 ? now - 1 - k : now + 60_000)
      await settle(s)
      const at = now + 20_000
      const due = entries.filter((e) => e.exp <= at).sort((a, b) => a.exp - b.exp)
      const busy = new Set([due[0].key, due[due.length - 1].key])
      const found: OutboxEntry[] = []
      for (;;) {
        const batch = await s.outbox.expired(at, 500, (e) => busy.has(e.key) || found.some((f) => f.key === e.key))
        if (batch.length === 0) break
        found.push(...batch)
        await s.outbox.kill(batch.map((entry) => ({ entry, code: 'TTL_EXPIRED', reason: 'test' })))
      }
      assert.deepEqual(found.map((e) => e.key), due.filter((e) => !busy.has(e.key)).map((e) => e.key), 'every due entry but the busy, oldest expiry first (within each call)')
      assert.equal(found.length, due.length - 2)
      assert.deepEqual((await s.outbox.expired(at, 500)).map((e) => e.key).sort(), [...busy].sort(), 'then only the busy ones')
      await settle(s)
      const left = new Set(await keysUnder(s.db, 'o!'))
      assert.equal(left.size, entries.length - found.length)
      for (const k of await keysUnder(s.db, 'e!')) assert.ok(left.has(k.slice(k.indexOf('!', 2) + 1)), `${k}: a record only for a queued entry`)
    })
  })

  it('a sweep call returns at most its limit of late entries due, oldest expiry first; the calls after it take the rest, each once', async () => {
    await withStore(async (open) => {
      const s = await open()
      const now = Date.now()
      const entries = await queue(s, INDEX_AFTER, (k) => now - 1 - k) // all late, all due
      const seen = new Set<string>()
      for (let calls = 1; ; calls++) {
        const batch = await s.outbox.expired(now, 100)
        assert.ok(batch.length <= 100)
        if (batch.length === 0) break
        for (const e of batch) { assert.ok(!seen.has(e.key), 'each once'); seen.add(e.key) }
        for (let k = 1; k < batch.length; k++) assert.ok(batch[k - 1].exp <= batch[k].exp, 'oldest expiry first within a call')
        await s.outbox.kill(batch.map((entry) => ({ entry, code: 'TTL_EXPIRED', reason: 'test' })))
        assert.ok(calls <= INDEX_AFTER / 100 + 1)
      }
      assert.equal(seen.size, entries.length)
    })
  })

  it('a restart writes the records a crash left unwritten, and the entries still expire', async () => {
    await withStore(async (open) => {
      let s = await open()
      const now = Date.now()
      const entries = await queue(s, 50, (k) => now + (k % 2 === 0 ? -1 : 60_000))
      assert.deepEqual(await keysUnder(s.db, 'e!'), [], 'late when the store closes (as when the process dies)')
      s = await open()
      assert.deepEqual((await keysUnder(s.db, 'e!')).sort(), entries.map((e) => expiryKey(e.exp, e.key)).sort(), 'load() wrote every record')
      const due = await s.outbox.expired(now, 100)
      assert.deepEqual(due.map((e) => e.key).sort(), entries.filter((e) => e.exp <= now).map((e) => e.key).sort())
    })
  })

  it('an index record whose entry is gone is deleted by expired() once due; a released entry (its write failed) is not found', async () => {
    await withStore(async (open) => {
      const s = await open()
      const now = Date.now()
      const [gone] = await queue(s, 1, () => now - 5)
      // its record, then its removal overtaking it: what a late write racing a removal can leave
      const leftover = expiryKey(gone.exp, gone.key)
      assert.equal(await s.outbox.remove([gone]), 1)
      await s.committer.writeUnsynced([{ type: 'put', key: leftover, value: new Uint8Array(0) }])
      assert.deepEqual(await keysUnder(s.db, 'e!'), [leftover])
      assert.deepEqual(await s.outbox.expired(now, 10), [])
      assert.deepEqual(await keysUnder(s.db, 'e!'), [], 'the leftover was deleted')
      // a staged entry whose write failed: released, not queued, not found
      const failed = s.outbox.stage(PEER, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', now - 5, new Uint8Array([1]))
      s.outbox.release(failed.entry)
      assert.equal(s.outbox.depthOf(PEER), 0)
      assert.deepEqual(await s.outbox.expired(now, 10), [], 'not queued')
    })
  })
})

describe('store - LateIndex', () => {
  it('an entry settled while its record is written is not waiting again when that write fails; others are', () => {
    const late = new LateIndex()
    for (const k of ['a', 'b', 'c']) late.add(k, 1)
    const writing = late.startWriting(2)
    assert.deepEqual(writing.map((u) => u.key), ['a', 'b'], 'the oldest')
    assert.equal(late.size, 1)
    assert.ok(late.has('a'), 'still without a durable record')
    assert.equal(late.settle('a'), false, 'its record may exist: delete it')
    late.failed(writing)
    assert.equal(late.has('a'), false)
    assert.ok(late.has('b'))
    assert.equal(late.settle('b'), true, 'waiting again: never had a record')
    assert.equal(late.settle('c'), true)
    assert.equal(late.size, 0)
    assert.deepEqual(late.due(10), [])
  })
})
