import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { POOLED_BATCH_MAX_BYTES, arrayBatchTarget, batchTarget, openDb, type BatchTarget, type RawDb, type WriteOp } from '../../src/store/db.js'
import { seeded } from '../../src/util/seeded.js'

/** Everything a store holds, in key order, values as hex. */
async function contents (db: RawDb): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = []
  for await (const [k, v] of db.iterator()) out.push([k, Buffer.from(v).toString('hex')])
  return out
}

/** Batches of puts, overwrites and deletes (also of keys written in the same batch), empty and large values, non-ASCII keys. */
function workload (): WriteOp[][] {
  const rnd = seeded(18)
  const keys = ['o!peer!000001', 'x!00ff!o!peer!000001', 'h!01J!delivered', 'i!nødé!000002', 'd!ключ', 'z!' + 'k'.repeat(300)]
  const batches: WriteOp[][] = []
  for (let b = 0; b < 40; b++) {
    const ops: WriteOp[] = []
    const n = 1 + Math.floor(rnd() * 12)
    for (let i = 0; i < n; i++) {
      const key = rnd() < 0.5 ? keys[Math.floor(rnd() * keys.length)] : `k!${b}!${i}`
      if (rnd() < 0.3) ops.push({ type: 'del', key })
      else ops.push({ type: 'put', key, value: new Uint8Array(Math.floor(rnd() * (rnd() < 0.1 ? 70_000 : 600))).map(() => Math.floor(rnd() * 256)) })
    }
    batches.push(ops)
  }
  return batches
}

describe('store - batchTarget', () => {
  let dir: string
  const dbs: RawDb[] = []

  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'amesh-batch-target-')) })
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const open = async (name: string): Promise<RawDb> => {
    const db = await openDb(join(dir, name))
    dbs.push(db)
    return db
  }

  it('the chained native batch stores exactly what the op-array batch stores, synced and unsynced, also after a reopen', async () => {
    const fast = await open('fast')
    const reference = await open('reference')
    const targets: Array<[RawDb, BatchTarget]> = [[fast, batchTarget(fast)], [reference, arrayBatchTarget(reference)]]
    const batches = workload()
    for (const [k, ops] of batches.entries()) {
      for (const [, t] of targets) await t.batch(ops, { sync: k % 2 === 0 })
    }
    const written = await contents(fast)
    assert.ok(written.length > 20, 'the workload leaves a store to compare')
    assert.deepEqual(written, await contents(reference))
    await fast.close()
    dbs.splice(dbs.indexOf(fast), 1)
    assert.deepEqual(await contents(await open('fast')), written)
  })

  it('reused chained batches (and batches past the pool\'s byte bound) store what the op-array batch stores, across a close and reopen of the same store', async () => {
    const fast = await open('pooled')
    const reference = await open('pooled-reference')
    const fastTarget = batchTarget(fast)
    const refTarget = arrayBatchTarget(reference)
    const big: WriteOp[] = [0, 1].map((i) => ({ type: 'put', key: `big!${i}`, value: new Uint8Array(POOLED_BATCH_MAX_BYTES / 2 + 1).fill(i + 1) }))
    const rounds = [...workload(), big, ...workload().map((ops) => ops.map((op): WriteOp => op.type === 'put' ? { ...op, key: `r2!${op.key}` } : op))]
    for (const [k, ops] of rounds.entries()) {
      // the store guard's reopen: the same db object closed and opened again, the same target kept
      if (k === 45) { await fast.close(); await fast.open() }
      await fastTarget.batch(ops, { sync: k % 3 === 0 })
      await refTarget.batch(ops, { sync: k % 3 === 0 })
    }
    const written = await contents(fast)
    assert.ok(written.some(([key]) => key === 'big!1'), 'the large batch landed')
    assert.deepEqual(written, await contents(reference))
  })

  it('a batch on a closed store is refused with the store\'s own error, as through batch()', async () => {
    const db = await open('closed')
    await db.close()
    dbs.splice(0)
    await assert.rejects(batchTarget(db).batch([{ type: 'put', key: 'a', value: new Uint8Array(1) }, { type: 'del', key: 'b' }], { sync: true }), (err: { code?: string }) => err.code === 'LEVEL_DATABASE_NOT_OPEN')
  })
})
