import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, MAX_BATCH_OPS, batchTarget, openDb, type BatchTarget, type Durability, type WriteOp } from '../../src/store/db.js'

interface Call { ops: WriteOp[], sync: boolean, finish: (err?: Error) => void }

/** A BatchTarget whose batches finish only when the test says so. */
function stub (): { target: BatchTarget, calls: Call[] } {
  const calls: Call[] = []
  const target: BatchTarget = {
    batch: async (ops, options) => await new Promise<void>((resolve, reject) => {
      calls.push({ ops, sync: options.sync, finish: (err) => { if (err === undefined) resolve(); else reject(err) } })
    })
  }
  return { target, calls }
}

const put = (key: string): WriteOp => ({ type: 'put', key, value: new Uint8Array([1]) })
const tick = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve))

/** Track whether a promise settled, without awaiting it. */
function track (p: Promise<void>): { done: boolean, failed?: unknown } {
  const s: { done: boolean, failed?: unknown } = { done: false }
  p.then(() => { s.done = true }, (err) => { s.done = true; s.failed = err })
  return s
}

describe('store - Committer', () => {
  const modes: Array<[Durability, boolean]> = [['always', true], ['batch', true], ['none', false]]
  for (const [mode, sync] of modes) {
    it(`${mode} - batches are written with sync=${String(sync)} and callers resolve only after their batch finished`, async () => {
      const { target, calls } = stub()
      const c = new Committer(target, mode)
      const w = track(c.write([put('a')]))
      await tick()
      assert.equal(calls.length, 1)
      assert.equal(calls[0].sync, sync)
      await tick()
      assert.equal(w.done, false, 'not resolved before the batch is on disk')
      calls[0].finish()
      await tick()
      assert.equal(w.done, true)
      assert.equal(w.failed, undefined)
    })
  }

  it('batch - writes queued in one tick share one synced batch; writes during a batch go into the next one', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'batch')
    const first = [track(c.write([put('a')])), track(c.write([put('b'), put('c')]))]
    await tick()
    assert.equal(calls.length, 1)
    assert.deepEqual(calls[0].ops.map((o) => o.key), ['a', 'b', 'c'])
    const second = [track(c.write([put('d')])), track(c.write([put('e')]))]
    await tick()
    assert.equal(calls.length, 1, 'nothing starts while a batch is in flight')
    calls[0].finish()
    await tick(); await tick()
    assert.ok(first.every((t) => t.done))
    assert.ok(second.every((t) => !t.done))
    assert.equal(calls.length, 2)
    assert.deepEqual(calls[1].ops.map((o) => o.key), ['d', 'e'])
    assert.equal(calls[1].sync, true)
    calls[1].finish()
    await tick()
    assert.ok(second.every((t) => t.done))
    assert.deepEqual(c.stats, { batches: 2, synced: 2, ops: 5 })
  })

  it('always - one synced batch per write call, in call order', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'always')
    const ws = [track(c.write([put('a')])), track(c.write([put('b'), put('c')])), track(c.write([put('d')]))]
    for (let i = 0; i < 3; i++) {
      await tick()
      assert.equal(calls.length, i + 1)
      assert.equal(calls[i].sync, true)
      calls[i].finish()
      await tick()
      assert.deepEqual(ws.map((w) => w.done), [0, 1, 2].map((k) => k <= i))
    }
    assert.deepEqual(calls.map((x) => x.ops.map((o) => o.key)), [['a'], ['b', 'c'], ['d']])
  })

  it('a failed batch rejects exactly the callers in it; later writes still go through', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'batch')
    const a = track(c.write([put('a')]))
    await tick()
    const b = track(c.write([put('b')]))
    calls[0].finish(new Error('disk on fire'))
    await tick(); await tick()
    assert.equal(a.done, true)
    assert.match(String(a.failed), /disk on fire/)
    assert.equal(b.done, false)
    calls[1].finish()
    await tick()
    assert.equal(b.done, true)
    assert.equal(b.failed, undefined)
  })

  it('a caller\'s operations are never split, and a batch holds at most MAX_BATCH_OPS unless one caller alone is bigger', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'batch')
    const big = Array.from({ length: MAX_BATCH_OPS - 1 }, (_, i) => put(`k${i}`))
    void c.write(big)
    void c.write([put('x'), put('y')])
    await tick()
    assert.equal(calls[0].ops.length, MAX_BATCH_OPS - 1)
    calls[0].finish()
    await tick(); await tick()
    assert.deepEqual(calls[1].ops.map((o) => o.key), ['x', 'y'])
    calls[1].finish()
  })

  it('drain() while a batch is in flight resolves once it is written (no hang)', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'batch')
    void c.write([put('a')])
    await tick()
    const d = track(c.drain())
    await tick()
    assert.equal(d.done, false)
    calls[0].finish()
    await tick(); await tick(); await tick()
    assert.equal(d.done, true, 'drain must not wait for a batch that never comes')
    assert.equal(calls.length, 1, 'an empty drain writes nothing')
  })

  for (const mode of ['always', 'batch', 'none'] as Durability[]) {
    it(`${mode} - writeUnsynced is written at once, unsynced, beside a synced batch in flight, and only its caller waits for it`, async () => {
      const { target, calls } = stub()
      const c = new Committer(target, mode)
      const send = track(c.write([put('put-1')]))
      await tick()
      assert.equal(calls.length, 1)
      const removal = track(c.writeUnsynced([{ type: 'del', key: 'old' }]))
      assert.equal(calls.length, 2, 'not queued behind the batch in flight')
      assert.deepEqual(calls[1].ops, [{ type: 'del', key: 'old' }])
      assert.equal(calls[1].sync, false)
      const next = track(c.write([put('put-2')]))
      calls[0].finish()
      await tick(); await tick()
      assert.equal(send.done, true)
      assert.equal(removal.done, false, 'the unsynced write is still in flight')
      assert.deepEqual(calls[2].ops.map((o) => o.key), ['put-2'], 'the next synced batch does not wait for the unsynced write')
      assert.equal(calls[2].sync, mode !== 'none')
      calls[2].finish()
      await tick(); await tick()
      assert.equal(next.done, true)
      calls[1].finish()
      await tick()
      assert.equal(removal.done, true)
      assert.equal(removal.failed, undefined)
      await c.writeUnsynced([])
      assert.equal(calls.length, 3, 'nothing to write: no batch')
    })
  }

  it('drain() also waits for unsynced writes in flight (a clean stop closes the store after them)', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'batch')
    void c.writeUnsynced([{ type: 'del', key: 'gone' }])
    const d = track(c.drain())
    await tick(); await tick()
    assert.equal(d.done, false)
    calls[0].finish()
    await tick(); await tick()
    assert.equal(d.done, true)
    assert.equal(calls.length, 1)
  })

  it('an idle committer starts its batch once the microtasks queued so far ran, before the next turn; after a batch, the next starts on the next turn (what queued meanwhile goes in it)', async () => {
    const { target, calls } = stub()
    const c = new Committer(target, 'batch')
    void c.write([put('a')])
    void c.write([put('b')])
    await Promise.resolve()
    assert.equal(calls.length, 1, 'started before the next turn')
    assert.deepEqual(calls[0].ops.map((o) => o.key), ['a', 'b'], 'writes of the same microtask run share it')
    void c.write([put('c')])
    calls[0].finish()
    await Promise.resolve(); await Promise.resolve()
    void c.write([put('d')])
    await tick(); await tick()
    assert.equal(calls.length, 2)
    assert.deepEqual(calls[1].ops.map((o) => o.key), ['c', 'd'], 'queued while a batch was written, or in the turn it finished: the next batch')
    calls[1].finish()
    const ref = stub()
    const r = new Committer(ref.target, 'batch', undefined, true)
    void r.write([put('a')])
    await Promise.resolve()
    assert.equal(ref.calls.length, 0, 'the reference waits for the next turn')
    await tick()
    assert.equal(ref.calls.length, 1)
    ref.calls[0].finish()
  })

  it('the early start stores exactly what the reference (a turn later) stores, each write acknowledged only after its synced batch (real LevelDB)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amesh-committer-'))
    try {
      const stored: Array<Array<[string, string]>> = []
      for (const turnStart of [false, true]) {
        const db = await openDb(join(dir, String(turnStart)))
        const inner = batchTarget(db)
        let synced = 0
        const c = new Committer({ batch: async (ops, o) => { await inner.batch(ops, o); if (o.sync) synced++ } }, 'batch', undefined, turnStart)
        const writes: Array<Promise<void>> = []
        for (let i = 0; i < 40; i++) {
          const at = synced
          const ops: WriteOp[] = [put(`k${i}`), ...(i % 7 === 3 ? [{ type: 'del', key: `k${i - 2}` } as WriteOp] : [])]
          writes.push(c.write(ops).then(() => { assert.ok(synced > at, 'acknowledged only after a synced batch') }))
          if (i % 3 === 0) await Promise.resolve()
          if (i % 5 === 0) await tick()
        }
        await Promise.all(writes)
        await c.drain()
        const rows: Array<[string, string]> = []
        for await (const [k, v] of db.iterator()) rows.push([k, Buffer.from(v).toString('hex')])
        stored.push(rows)
        await db.close()
      }
      assert.deepEqual(stored[0], stored[1])
      assert.ok(stored[0].length > 30)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
