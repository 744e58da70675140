import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, toJsonBytes, type RawDb, type WriteOp } from '../../src/store/db.js'
import { InboxStore, encodeDedupValue, encodeInboxValue, seqKey, type AppendResult } from '../../src/store/inbox.js'
import { Bucket } from '../../src/store/schema.js'
import { ulidTimePrefix } from '../../src/store/ulid-time.js'
import { ulid } from '../../src/util/ulid.js'

// A store written before session 15 keeps its message ids under `d!`; this
// build writes them under `i~` (after the inbox in key order) and still reads
// and prunes the old ones, so an upgrade neither lets a duplicate in nor
// rewrites anything at open.

const A = 'did:key:zNodeA'
const B = 'did:key:zNodeB'
const HOUR = 3_600_000
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)
const text = (b: Uint8Array): string => new TextDecoder().decode(b)
const idAt = (ms: number, tail = '0000000000000000'): string => ulidTimePrefix(ms) + tail
const one = (nodeId: string, packetId: string, t: string): { nodeId: string, packetId: string, packet: Uint8Array } => ({ nodeId, packetId, packet: bytes(t) })

/** Every key of the store under `prefix`, in order. */
async function keysUnder (db: RawDb, prefix: string): Promise<string[]> {
  const out: string[] = []
  for await (const key of db.keys({ gt: prefix, lt: prefix + '\xff' })) out.push(key)
  return out
}

describe('store - InboxStore on a store written before the dedup ids moved (d! → i~)', () => {
  let dir: string
  let db: RawDb
  let inbox: InboxStore
  /** keys under d! that getMany was asked for since the last open */
  let oldAsked: string[]

  const open = async (window = HOUR): Promise<void> => {
    db = await openDb(join(dir, 'store'))
    oldAsked = []
    // the real store, with its getMany calls for old-prefix keys noted
    const counted = new Proxy(db, {
      get (target, prop, receiver) {
        if (prop === 'getMany') {
          return async (keys: string[]) => {
            oldAsked.push(...keys.filter((k) => k.startsWith(Bucket.dedupBefore)))
            return await target.getMany(keys)
          }
        }
        const v = Reflect.get(target, prop, receiver) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
    inbox = new InboxStore(counted, new Committer(batchTarget(db), 'batch'), 1000, window)
  }
  const reopen = async (window?: number): Promise<void> => { await db.close(); await open(window) }

  /** What the build before session 15 wrote for packets appended to `nodeId` from seq 1: entries, their ids under d!, the cursor. */
  async function writeOldStore (nodeId: string, ids: string[], cursor: number): Promise<void> {
    const ops: WriteOp[] = []
    ids.forEach((id, k) => {
      ops.push({ type: 'put', key: seqKey(nodeId, k + 1), value: encodeInboxValue(Date.now(), bytes(`old ${k + 1}`)) })
      ops.push({ type: 'put', key: Bucket.dedupBefore + id, value: encodeDedupValue(nodeId, k + 1) })
    })
    ops.push({ type: 'put', key: Bucket.cursor + nodeId, value: toJsonBytes(cursor) })
    await db.batch(ops, { sync: true })
  }

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-inbox-up-')); await open() })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('old ids are duplicates with their original seqs (from the floor and below it); new ids are stored under i~ only; nothing under d! is written', async () => {
    const now = Date.now()
    const old = [idAt(now - 3000), idAt(now - 2000), idAt(now - 1000, 'ZZZZZZZZZZZZZZZZ')]
    await writeOldStore(A, old, 1)
    await reopen()
    const before = await keysUnder(db, Bucket.dedupBefore)
    const fresh = ulid()
    const below = idAt(now - 1500) // new, but below the newest old id: must be looked up, and is new
    const res = await inbox.append([one(A, old[2], 'again 3'), one(A, fresh, 'fresh'), one(A, old[0], 'again 1'), one(A, below, 'below'), one(A, old[1], 'again 2')])
    assert.deepEqual(res, [
      { seq: 3, duplicate: true },
      { seq: 4, duplicate: false },
      { seq: 1, duplicate: true },
      { seq: 5, duplicate: false },
      { seq: 2, duplicate: true }
    ] satisfies AppendResult[])
    assert.deepEqual(await keysUnder(db, Bucket.dedupBefore), before, 'd! untouched')
    assert.deepEqual(await keysUnder(db, Bucket.dedup), [Bucket.dedup + below, Bucket.dedup + fresh].sort())
    assert.deepEqual((await inbox.read(A, 0, 10)).map((e) => text(e.packet)), ['old 1', 'old 2', 'old 3', 'fresh', 'below'])
    assert.deepEqual(await inbox.info(A), { last: 5, cursor: 1, unacked: 4 })
  })

  it('after a reopen, ids under both prefixes are found by the duplicate check, locate and entryById', async () => {
    const now = Date.now()
    const old = [idAt(now - 2000), idAt(now - 1000)]
    await writeOldStore(A, old, 0)
    await reopen()
    const later = [ulid(), ulid()]
    await inbox.append(later.map((id, k) => one(B, id, `new ${k}`)))
    await reopen()
    const res = await inbox.append([one(B, later[1], 'x'), one(A, old[1], 'x'), one(B, later[0], 'x'), one(A, old[0], 'x')])
    assert.deepEqual(res, [{ seq: 2, duplicate: true }, { seq: 2, duplicate: true }, { seq: 1, duplicate: true }, { seq: 1, duplicate: true }])
    assert.deepEqual(await inbox.locate(old[0]), { nodeId: A, seq: 1 })
    assert.deepEqual(await inbox.locate(later[1]), { nodeId: B, seq: 2 })
    assert.equal(await inbox.locate(ulid()), undefined)
    assert.equal(text((await inbox.entryById(A, old[1]))?.packet ?? new Uint8Array()), 'old 2')
    assert.equal(text((await inbox.entryById(B, later[0]))?.packet ?? new Uint8Array()), 'new 0')
    assert.equal(await inbox.entryById(B, old[0]), undefined, 'an id of another node')
  })

  it('pruneDedup forgets ids past the window under both prefixes; once no old id is left, d! is no longer read', async () => {
    const now = Date.now()
    const past = [idAt(now - 3 * HOUR), idAt(now - 2 * HOUR)]
    const within = idAt(now - HOUR / 2)
    await writeOldStore(A, [...past, within], 0)
    await reopen(10 * HOUR)
    const newPast = idAt(now - 4 * HOUR)
    const newWithin = ulid()
    await inbox.append([one(B, newPast, 'new past'), one(B, newWithin, 'new within')])
    await reopen(HOUR)
    assert.equal(await inbox.pruneDedup(now), 3, 'two old ids and one new id were older than the window')
    assert.deepEqual(await keysUnder(db, Bucket.dedupBefore), [Bucket.dedupBefore + within])
    assert.deepEqual(await keysUnder(db, Bucket.dedup), [Bucket.dedup + newWithin])
    assert.deepEqual(await inbox.append([one(A, within, 'again')]), [{ seq: 3, duplicate: true }], 'the old id within the window is still found')
    assert.ok(oldAsked.length > 0, 'while an old id is left, misses are read under d! too')
    // the window passes for the last old id: it is pruned, and misses stop reading d!
    assert.equal(await inbox.pruneDedup(now + HOUR), 1)
    assert.deepEqual(await keysUnder(db, Bucket.dedupBefore), [])
    oldAsked = []
    assert.equal(await inbox.locate(idAt(now)), undefined)
    assert.deepEqual(oldAsked, [], 'no d! read once none is left')
    await reopen(HOUR)
    assert.equal(await inbox.locate(idAt(now)), undefined)
    assert.deepEqual(oldAsked, [], 'nor after a reopen of a store that holds none')
  })
})
