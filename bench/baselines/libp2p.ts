// B_rtt and B_stream: raw libp2p 2.x streams between two processes on loopback.
import { mibPerSecond, p50, p99, mean, perSecond } from '../lib/stats.js'
import { numField, numsField, spawnWorker, workerScript, type Worker, type WorkerMessage } from '../lib/proc.js'
import type { BenchContext, Figure, JsonObject, Measurement } from '../lib/types.js'

const MiB = 1024 * 1024

async function startResponder (): Promise<{ worker: Worker, addr: string }> {
  const worker = spawnWorker(workerScript('p2p-responder'))
  const ready = await worker.next('ready', 30_000)
  const addrs = ready.data?.addrs
  if (!Array.isArray(addrs) || typeof addrs[0] !== 'string') throw new Error('responder gave no address')
  return { worker, addr: addrs[0] }
}

async function runInitiatorOnce (args: JsonObject): Promise<WorkerMessage> {
  const worker = spawnWorker(workerScript('p2p-initiator'), args)
  try {
    return await worker.next('result', 300_000)
  } finally {
    await worker.stop()
  }
}

/** One retry: on a loaded machine a stream is occasionally reset before the sink answers. */
async function runInitiator (args: JsonObject): Promise<WorkerMessage> {
  try {
    return await runInitiatorOnce(args)
  } catch (err) {
    process.stderr.write(`  initiator failed (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); retrying once\n`)
    return await runInitiatorOnce(args)
  }
}

async function withResponder<T> (body: (addr: string, responder: Worker) => Promise<T>): Promise<T> {
  const { worker, addr } = await startResponder()
  try {
    return await body(addr, worker)
  } finally {
    await worker.stop()
  }
}

function rssFigure (name: string, bytes: number | undefined, note: string): Figure[] {
  if (bytes === undefined) return []
  return [{ name, value: bytes / MiB, unit: 'MiB', better: 'lower', note }]
}

async function rtt (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(10_000, 2000)
  const warmup = ctx.count(2000, 1000)
  return await withResponder(async (addr, responder) => {
    const samples = numsField(await runInitiator({ addr, mode: 'rtt', count, warmup, size: 512 }), 'samples')
    const note = `${count} round trips, 512 B, one in flight`
    return [
      { name: 'B_rtt.p50', value: p50(samples), unit: 'ms', better: 'lower', note },
      { name: 'B_rtt.p99', value: p99(samples), unit: 'ms', better: 'lower', note },
      { name: 'B_rtt.mean', value: mean(samples), unit: 'ms', better: 'lower', note },
      ...rssFigure('B_rss.host', await responder.rss(), 'raw libp2p responder after traffic')
    ]
  })
}

/** Median elapsed ms over `reps` one-way streams of `count` frames, and bytes per rep. */
async function oneWay (addr: string, count: number, size: number, reps: number): Promise<{ elapsedMs: number, bytes: number }> {
  const msg = await runInitiator({ addr, mode: 'stream', count, size, reps })
  return { elapsedMs: p50(numsField(msg, 'elapsedMs')), bytes: numField(msg, 'bytes') }
}

async function stream (ctx: BenchContext): Promise<Figure[]> {
  const small = ctx.count(50_000, 10_000)
  const large = ctx.count(5_000, 1_000)
  const reps = ctx.count(5, 3)
  return await withResponder(async addr => {
    const s = await oneWay(addr, small, 512, reps)
    const l = await oneWay(addr, large, 64 * 1024, reps)
    const note = (n: number): string => `median of ${reps} streams of ${n} frames`
    return [
      { name: 'B_stream.512B', value: perSecond(small, s.elapsedMs), unit: 'msg/s', better: 'higher', note: note(small) },
      { name: 'B_stream.64KB', value: mibPerSecond(l.bytes, l.elapsedMs), unit: 'MiB/s', better: 'higher', note: note(large) },
      { name: 'B_stream.64KB.rate', value: perSecond(large, l.elapsedMs), unit: 'msg/s', better: 'higher', note: note(large) }
    ]
  })
}

export const bRtt: Measurement = {
  name: 'B_rtt',
  description: 'raw libp2p persistent-stream round trip, 512 B, one in flight (+ raw host RSS)',
  run: rtt
}

export const bStream: Measurement = {
  name: 'B_stream',
  description: 'raw libp2p one-way stream, 512 B (msg/s) and 64 KiB (MiB/s) length-prefixed frames',
  run: stream
}
