// B_fsync, B_batch, B_iter: raw `level` (classic-level) in a child process.
import { p50, p99, perSecond } from '../lib/stats.js'
import { numsField, spawnWorker, workerScript, type WorkerMessage } from '../lib/proc.js'
import type { BenchContext, Figure, JsonObject, Measurement } from '../lib/types.js'

async function levelRun (ctx: BenchContext, args: JsonObject): Promise<WorkerMessage> {
  const dir = await ctx.tmpDir('level')
  const worker = spawnWorker(workerScript('level'), { ...args, dir })
  try {
    return await worker.next('result', 300_000)
  } finally {
    await worker.stop()
  }
}

async function fsync (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(2000, 300)
  const samples = numsField(await levelRun(ctx, { mode: 'fsync', count, size: 512 }), 'samples')
  const note = `${count} puts {sync: true}, 512 B`
  return [
    { name: 'B_fsync.p50', value: p50(samples), unit: 'ms', better: 'lower', note },
    { name: 'B_fsync.p99', value: p99(samples), unit: 'ms', better: 'lower', note }
  ]
}

async function batch (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(50_000, 10_000)
  const reps = ctx.count(3, 3)
  const msg = await levelRun(ctx, { mode: 'batch', count, size: 512, batch: 100, reps })
  const rate = perSecond(count, p50(numsField(msg, 'elapsedMs')))
  const note = `median of ${reps} runs of ${count} puts in synced batches of 100 x 512 B`
  return [{ name: 'B_batch', value: rate, unit: 'msg/s', better: 'higher', note }]
}

async function iter (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(100_000, 100_000)
  const reps = ctx.count(3, 3)
  const msg = await levelRun(ctx, { mode: 'iter', count, size: 512, reps })
  const rate = perSecond(count, p50(numsField(msg, 'elapsedMs')))
  const note = `median of ${reps} full scans of ${count} entries of 512 B`
  return [{ name: 'B_iter', value: rate, unit: 'entries/s', better: 'higher', note }]
}

export const bFsync: Measurement = { name: 'B_fsync', description: 'raw level synced single put (p50/p99)', run: fsync }
export const bBatch: Measurement = { name: 'B_batch', description: 'raw level synced batches of 100 x 512 B', run: batch }
export const bIter: Measurement = { name: 'B_iter', description: 'raw level iterator over 512 B entries', run: iter }
