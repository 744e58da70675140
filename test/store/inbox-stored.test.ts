// The inbox's stored-values read (readStored, inbox-stored.ts) against its
// reference (read): the same entries in the same order under every cursor,
// limit and byte bound, over gaps, old-format values and the in-memory tail;
// and the follow frame built from the values (encodeFollowValues) against the
// frame of read's entries (encodeFollowPage), byte for byte.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as cbor from '@ipld/dag-cbor'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { InboxStore, seqKey } from '../../src/store/inbox.js'
import { entriesOf } from '../../src/store/inbox-stored.js'
import { encodeFollowPage, encodeFollowValues } from '../../src/control/follow-frames.js'
import { readFrame, readFrameOf } from '../../src/host/api-follow.js'
import { FramePool } from '../../src/host/frame-pool.js'
import { encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'

const A = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'
const B = 'did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG'
const C = 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH'

function packet (i: number): Uint8Array {
  const p: Packet = { id: ulid(), from: [A, B, C][i % 3], to: B, from_name: `n${i % 3}`, to_name: 'bo', signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: `${i} "é" ${'z'.repeat((i * 37) % 700)}` }, ts: 1_796_000_000_000 + i }
  return encodePacket(p)
}

describe('store - InboxStore.readStored (stored values) against read', () => {
  let dir: string
  let db: RawDb
  let inbox: InboxStore
  const label = (id: string): string => id === A ? 'alice-here' : id === C ? 'carol ü' : id

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'am-inbox-stored-'))
    db = await openDb(join(dir, 'store'))
    inbox = new InboxStore(db, new Committer(batchTarget(db), 'batch'), 100_000)
  })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  const fill = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i += 500) {
      await inbox.append(Array.from({ length: Math.min(500, n - i) }, (_, k) => ({ nodeId: B, packetId: ulid(), packet: packet(i + k) })))
    }
  }

  /** readStored and read agree for (after, limit, maxBytes); the frames agree byte for byte. */
  const same = async (after: number, limit: number, maxBytes?: number): Promise<number> => {
    const ref = await inbox.read(B, after, limit, maxBytes)
    const page = await inbox.readStored(B, after, limit, maxBytes)
    const what = `after ${after}, limit ${limit}, maxBytes ${maxBytes ?? 'none'}`
    assert.deepEqual(page.seqs, ref.map((e) => e.seq), what)
    assert.deepEqual(entriesOf(page), ref, what)
    assert.equal(page.bytes, page.values.reduce((s, v) => s + v.byteLength, 0))
    if (page.plain) assert.deepEqual(Buffer.from(encodeFollowValues(page.seqs, page.values, label)), Buffer.from(encodeFollowPage(ref, label)), what)
    await sameFrame(after, limit)
    return ref.length
  }

  /** inbox.read's frame (each value copied in as it is read) is its reference's (the page read whole), byte for byte, also from a pool's buffers */
  const sameFrame = async (after: number, limit: number): Promise<void> => {
    const host = { inbox, label }
    const ref = Buffer.from(await readFrameOf(host, B, after, limit))
    assert.deepEqual(Buffer.from(await readFrame(host, B, after, limit)), ref, `readFrame after ${after}, limit ${limit}`)
    const pool = new FramePool({ max: 1, releaseAfterMs: 0 })
    for (let round = 0; round < 2; round++) {
      const frame = await readFrame(host, B, after, limit, pool.take)
      assert.deepEqual(Buffer.from(frame), ref, `readFrame from a pool after ${after}, limit ${limit}, round ${round}`)
      pool.giveAfter(frame, Promise.resolve())
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  it('the same entries and frames for every cursor, limit and byte bound, and across a whole replay in pages', async () => {
    await fill(3000)
    for (const after of [0, 1, 2, 499, 500, 1500, 2998, 2999, 3000, 5000]) {
      for (const limit of [1, 2, 255, 1024, 1025, 2500, 10_000]) await same(after, limit)
    }
    // byte bounds: below one value (one entry still), exactly at value boundaries, mid-page
    const [first] = await inbox.read(B, 0, 1)
    const one = first.packet.byteLength + 9
    for (const maxBytes of [1, one - 1, one, one + 1, 50_000, 400_000]) assert.ok(await same(0, 3000, maxBytes) >= 1)
    assert.equal(await same(10, 1, 1), 1)
    // a replay in follow's page sizes ends where read's does
    let after = 0
    let total = 0
    for (let limit = 256; ; limit = 1700) {
      const n = await same(after, limit)
      if (n === 0) break
      total += n
      after += n
    }
    assert.equal(total, 3000)
  })

  it('inbox.read\'s frame near the end of the inbox is sized for the entries left, not for the limit', async () => {
    await fill(1000)
    const sizes: number[] = []
    const alloc = (size: number): Buffer => { sizes.push(size); return Buffer.allocUnsafe(size) }
    const host = { inbox, label }
    assert.deepEqual(Buffer.from(await readFrame(host, B, 997, 10_000, alloc)), Buffer.from(await readFrameOf(host, B, 997, 10_000)))
    assert.ok(Math.max(...sizes) < 16 * 1024, `3 entries: buffers of ${sizes.join(', ')} bytes`)
    assert.deepEqual(Buffer.from(await readFrame(host, B, 1000, 10_000, alloc)), Buffer.from(await readFrameOf(host, B, 1000, 10_000)), 'past the end: the empty frame')
  })

  it('gaps, pruned heads, other nodes\' keys and old-format values read the same (old ones leave the page not plain)', async () => {
    await fill(40)
    await inbox.append([{ nodeId: A, packetId: ulid(), packet: packet(1) }])
    await db.del(seqKey(B, 7))
    await db.del(seqKey(B, 1))
    await db.put(seqKey(B, 12), cbor.encode({ r: 1_796_000_000_123, p: packet(12) }))
    for (const [after, limit] of [[0, 5], [0, 100], [6, 2], [11, 1], [12, 3], [39, 5], [40, 5]]) await same(after, limit)
    assert.equal((await inbox.readStored(B, 0, 100)).plain, false)
    assert.equal((await inbox.readStored(B, 12, 100)).plain, true)
  })

  it('entries served from the in-memory tail of a watched node read the same', async () => {
    await fill(10)
    const unwatch = inbox.watch(B)
    try {
      await fill(30)
      for (const [after, limit] of [[10, 5], [10, 100], [20, 3], [39, 5], [40, 5]]) await same(after, limit)
    } finally {
      unwatch()
    }
  })
})
