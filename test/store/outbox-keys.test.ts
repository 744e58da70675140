import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { expiryKey, outboxKey, OutboxKeys, seqOfKey } from '../../src/store/outbox-keys.js'
import { hex } from '../../src/store/outbox.js'
import { OutboxStore } from '../../src/store/outbox.js'
import { ulid } from '../../src/util/ulid.js'

const PEER = '12D3KooWFADrb4yvBdo6w9G9g7kJ5grumFtRiCKDir6Xn8BCoXLx'
const DESTS = [PEER, '12D3KooWPeerTwo', '', 'a', 'a2a:agent-one', 'dëst', 'd\u{1F600}', 'x'.repeat(220), 'x'.repeat(221), 'x'.repeat(300), '!', '\x7f', '\x80']
const NUMS = [0, 1, 15, 16, 255, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 48 - 1, 2 ** 48, 2 ** 53 - 1, 2 ** 53, 2 ** 64,
  Date.now(), Date.now() + 7 * 86_400_000, 1.5, 0.2, -0, -0.5, -1, NaN, Infinity, -Infinity]

/** A fresh outbox over a real LevelDB in a temporary directory, closed and removed after fn, also when it fails. */
async function withOutbox (limit: number, fn: (outbox: OutboxStore, committer: Committer, db: RawDb) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'am-outbox-keys-'))
  const db = await openDb(join(dir, 'store'))
  try {
    const committer = new Committer(batchTarget(db), 'batch')
    const outbox = new OutboxStore(db, committer, limit)
    await outbox.load()
    await fn(outbox, committer, db)
  } finally {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A flat string is what the fast path returns; the reference's rope reads the same. */
function same (fast: string, ref: string, what: string): void {
  assert.equal(fast, ref, what)
  assert.equal(fast.length, ref.length, what)
}

describe('store - outbox keys (OutboxKeys against the template reference)', () => {
  it('queue keys: every destination (ASCII, non-ASCII, empty, near and past the buffer) and seq, destinations changing and repeating', () => {
    const keys = new OutboxKeys()
    const seqs = [...NUMS]
    for (let k = 0; k < 500; k++) seqs.push(Math.floor(Math.random() * 2 ** 53), Math.floor(Math.random() * 2 ** 32), k)
    for (const seq of seqs) {
      for (const dest of DESTS) {
        same(keys.queue(dest, seq), outboxKey(dest, seq), `queue(${dest}, ${seq})`)
        same(keys.queue(dest, seq + 1), outboxKey(dest, seq + 1), `queue(${dest}, ${seq}+1) again`)
      }
    }
  })

  it('index keys: every expiry (in range, fractions, negative, past 12 digits, NaN) over queue keys and arbitrary ones', () => {
    const keys = new OutboxKeys()
    const exps = [...NUMS, 16 ** 12 - 1, 16 ** 12, 16 ** 12 + 1]
    for (let k = 0; k < 500; k++) exps.push(Math.floor(Math.random() * 16 ** 12), Date.now() + Math.floor(Math.random() * 1e9))
    const stored = DESTS.map((d) => outboxKey(d, 42))
    for (const exp of exps) {
      for (const key of [...stored, '', 'o!x!1', 'y'.repeat(240), 'y'.repeat(241), 'é'.repeat(3)]) {
        same(keys.index(exp, key), expiryKey(exp, key), `index(${exp}, ${key})`)
      }
    }
  })

  it('a store writes the reference keys (real LevelDB): queue keys as stored, index keys late (at a restart here), removal deletes both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'am-outbox-keys-'))
    let db = await openDb(join(dir, 'store'))
    const all = async (): Promise<string[]> => { const out: string[] = []; for await (const k of db.keys()) out.push(k); return out }
    try {
      const exp = Date.now() + 60_000
      let committer = new Committer(batchTarget(db), 'batch')
      let outbox = new OutboxStore(db, committer, 1000)
      await outbox.load()
      const staged = [PEER, 'dëst', PEER].map((d) => outbox.stage(d, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', exp, new Uint8Array([1, 2, 3])))
      for (const s of staged) await committer.write(s.ops)
      staged.forEach((s, k) => {
        assert.equal(s.entry.key, outboxKey(s.entry.dest, k + 1))
        assert.deepEqual(s.ops.map((o) => o.key), [s.entry.key], 'the entry alone: its index record comes late')
      })
      assert.deepEqual((await all()).sort(), staged.map((s) => s.entry.key).sort())
      // a restart (as after a crash): load() writes the index records the late entries never got
      await db.close()
      db = await openDb(join(dir, 'store'))
      committer = new Committer(batchTarget(db), 'batch')
      outbox = new OutboxStore(db, committer, 1000)
      await outbox.load()
      assert.deepEqual((await all()).sort(), staged.flatMap((s) => [s.entry.key, expiryKey(exp, s.entry.key)]).sort())
      // read back from the store: the removal deletes the queue key and the index record
      const read = await outbox.list(PEER, undefined, 10)
      assert.equal(await outbox.remove(read), 2)
      assert.deepEqual((await all()).sort(), [staged[1].entry.key, expiryKey(exp, staged[1].entry.key)].sort())
    } finally {
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('seqOfKey reads back the seq of every key outboxKey writes, and nothing else', () => {
    const seqs = [0, 1, 15, 16, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1]
    for (let k = 0; k < 2000; k++) seqs.push(Math.floor(Math.random() * 2 ** 53))
    for (const dest of DESTS) for (const seq of seqs) assert.equal(seqOfKey(outboxKey(dest, seq)), seq, `${dest} ${seq}`)
    for (const bad of ['', 'o!', 'o!x!', 'o!x!123', `o!x!${'0'.repeat(15)}`, `o!x!${'0'.repeat(15)}g`, `o!x!${'0'.repeat(15)}A`, `o!x${'0'.repeat(16)}`,
      `o!x!${'f'.repeat(16)}`, `o!x!${hex(2 ** 53, 16)}`, `o!x! ${'0'.repeat(15)}`, `o!x!-${'0'.repeat(15)}`]) {
      assert.equal(seqOfKey(bad), undefined, bad)
    }
    assert.equal(seqOfKey(`o!!${'0'.repeat(15)}9`), 9)
  })

  it('two queues holding one seq (not written by one counter): settled keys are held as strings, and settling one leaves the other queued', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'am-outbox-keys-'))
    let db = await openDb(join(dir, 'store'))
    try {
      const exp = Date.now() + 60_000
      // two stores over one db, each with its own counter: both write seq 1
      for (const dest of ['12D3KooWPeerOne', '12D3KooWPeerTwo']) {
        const c = new Committer(batchTarget(db), 'batch')
        const s = new OutboxStore(db, c, 100)
        await c.write(s.prepare(dest, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', exp, new Uint8Array([1])))
      }
      await db.close()
      db = await openDb(join(dir, 'store'))
      const committer = new Committer(batchTarget(db), 'batch')
      const outbox = new OutboxStore(db, committer, 100)
      await outbox.load()
      const [one] = await outbox.list('12D3KooWPeerOne', undefined, 10)
      const [two] = await outbox.list('12D3KooWPeerTwo', undefined, 10)
      assert.equal(one.seq, 1)
      assert.equal(two.seq, 1)
      assert.equal(await outbox.remove([one]), 1)
      assert.equal(await outbox.remove([two]), 1, 'the other queue\'s entry of the same seq is still queued')
      assert.equal(await outbox.remove([one, two]), 0)
      assert.deepEqual(outbox.totals().queued, 0)
    } finally {
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('entries without a seq field (copies made elsewhere) are held by the seq their key names: a copy of a settled entry is not settled again', async () => {
    await withOutbox(100, async (outbox, committer) => {
      const exp = Date.now() + 60_000
      const staged = [0, 1, 2].map(() => outbox.stage('12D3KooWPeerOne', ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', exp, new Uint8Array([1])))
      for (const s of staged) await committer.write(s.ops)
      const copies = staged.map((s) => ({ ...s.entry, seq: undefined, ikey: undefined }))
      assert.equal(await outbox.remove([staged[0].entry]), 1)
      assert.equal(await outbox.remove([copies[0], copies[1]]), 1, 'the copy of a settled entry is not settled again')
      assert.equal(await outbox.remove([staged[1].entry, staged[2].entry]), 1)
      assert.equal(outbox.depthOf('12D3KooWPeerOne'), 0)
    })
  })
})
