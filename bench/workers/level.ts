// Raw `level` (classic-level) worker for B_fsync / B_batch / B_iter.
// Args: {dir, mode: 'fsync'|'batch'|'iter', count, size, batch, reps}.
// Reports {samples} (fsync, ms per put) or {elapsedMs: [one per rep], count}.
import { Level } from 'level'
import { nowMs } from '../lib/stats.js'
import { argNum, argStr, finish, runWorker, workerArgs } from '../lib/worker.js'

type Db = Level<string, Uint8Array>

function key (i: number): string {
  return `m/${i.toString().padStart(10, '0')}`
}

function value (size: number, i: number): Uint8Array {
  const buf = new Uint8Array(size)
  buf.fill(i & 0xff)
  return buf
}

/** Per-put latencies (ms) of synced single puts. */
async function syncedPuts (db: Db, count: number, size: number): Promise<number[]> {
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    const v = value(size, i)
    const t0 = nowMs()
    await db.put(key(i), v, { sync: true })
    samples.push(nowMs() - t0)
  }
  return samples
}

/** Elapsed ms for `count` puts written as synced batches of `batch`. */
async function syncedBatches (db: Db, count: number, size: number, batch: number, sync: boolean, from = 0): Promise<number> {
  const t0 = nowMs()
  for (let i = from; i < from + count; i += batch) {
    const ops = []
    for (let j = i; j < Math.min(from + count, i + batch); j++) {
      ops.push({ type: 'put' as const, key: key(j), value: value(size, j) })
    }
    await db.batch(ops, { sync })
  }
  return nowMs() - t0
}

/** Elapsed ms to iterate every entry; checks the count. */
async function iterateAll (db: Db, expected: number): Promise<number> {
  const t0 = nowMs()
  let n = 0
  for await (const [, v] of db.iterator()) {
    if (v.byteLength === 0) throw new Error('empty value')
    n++
  }
  const elapsed = nowMs() - t0
  if (n !== expected) throw new Error(`iterated ${n} of ${expected}`)
  return elapsed
}

async function openDb (dir: string): Promise<Db> {
  const db = new Level<string, Uint8Array>(dir, { valueEncoding: 'view' })
  await db.open()
  return db
}

runWorker(async () => {
  const args = workerArgs()
  const dir = argStr(args, 'dir')
  const mode = argStr(args, 'mode')
  const count = argNum(args, 'count')
  const size = argNum(args, 'size', 512)
  let db = await openDb(dir)
  if (mode === 'fsync') {
    await syncedPuts(db, Math.ceil(count / 10), size) // warm-up
    const samples = await syncedPuts(db, count, size)
    await db.close()
    await finish({ type: 'result', data: { samples } })
  }
  const reps = argNum(args, 'reps', 1)
  const elapsedMs: number[] = []
  if (mode === 'batch') {
    for (let rep = 0; rep < reps; rep++) {
      elapsedMs.push(await syncedBatches(db, count, size, argNum(args, 'batch', 100), true, rep * count))
    }
    await db.close()
    await finish({ type: 'result', data: { elapsedMs, count } })
  }
  if (mode !== 'iter') throw new Error(`unknown mode ${mode}`)
  await syncedBatches(db, count, size, 1000, false)
  await db.close() // reopen so the iterator reads from tables, not only the memtable
  db = await openDb(dir)
  for (let rep = 0; rep < reps; rep++) elapsedMs.push(await iterateAll(db, count))
  await db.close()
  await finish({ type: 'result', data: { elapsedMs, count } })
})
