// Where the CPU of T5 (10 sender hosts -> 1 receiver) goes, per thread name:
// the sender hosts summed and the receiver, user and system µs per packet of
// the burst (from /proc/<pid>/task/<tid>/stat), beside the burst's figures;
// then the same split over successive slices of the burst (by packets the
// receiver holds), to tell a cost that falls as the processes warm up from
// one that stays per packet.
//   node --import ./dist/src/polyfill.js dist/bench/tools/t5-threads.js [senders] [per sender] [warm-up per sender] [slices]
// defaults: T5's own (10, 3,000, t5Warm's 8,000 to the receiver's other node), 6 slices; 2000 is T5's warm-up of
// session 10 (T2's), 0 is T5 before session 10
// (only the 50 first-contact sends per sender, before the hosts settle). T5_ROOT=DIR runs the daemons of another
// build (a directory with its dist/, bin/, package.json and node_modules), as root-ab.ts does;
// T5_KEEP=1 keeps the hosts' homes (their amesh.log, e.g. with AMESH_BENCH_NODE_ARGS=--trace-gc).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { PROJECT_ROOT } from '../lib/proc.js'
import { fanIn, type FanInOptions } from '../amesh/t5-fanin.js'
import { sumThreads, threadLine, threadReport, threads, type Threads } from '../lib/threads.js'
import { nowMs } from '../lib/stats.js'

interface Mark { at: number, accepted: number, delivered: number, senders: Threads, receiver: Threads }

const MAIN = ' (main)'
/** how long the hosts' idle CPU is read before the burst, ms */
const IDLE_MS = 3000

/** CPU ms per second between two readings, all threads and the main threads. */
function idleLine (a: Threads, b: Threads): string {
  let all = 0
  let main = 0
  for (const [name, t] of b) {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    const ms = t.user - s.user + t.sys - s.sys
    all += ms
    if (name.endsWith(MAIN)) main += ms
  }
  return `${(all * 1000 / IDLE_MS).toFixed(0)} ms/s (main ${(main * 1000 / IDLE_MS).toFixed(0)})`
}

/** µs per packet of the main thread and of every other thread between two readings. */
function split (a: Threads, b: Threads, n: number): string {
  let main = 0
  let other = 0
  for (const [name, t] of b) {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    const us = (t.user - s.user + t.sys - s.sys) * 1000 / n
    if (name.endsWith(MAIN)) main += us
    else other += us
  }
  return `main ${main.toFixed(0).padStart(4)} other ${other.toFixed(0).padStart(4)}`
}

function sliceReport (marks: Mark[]): string {
  let out = ''
  for (let i = 1; i < marks.length; i++) {
    const a = marks[i - 1]
    const b = marks[i]
    const n = b.delivered - a.delivered
    if (n <= 0) continue
    const rate = n * 1000 / (b.at - a.at)
    out += `slice ${a.delivered}-${b.delivered} ${rate.toFixed(0).padStart(6)} msg/s (accepted ${a.accepted}-${b.accepted} ${((b.accepted - a.accepted) * 1000 / (b.at - a.at)).toFixed(0)}/s) ${((b.at - a.at) / 1000).toFixed(1)} s  senders ${split(a.senders, b.senders, n)} [${threadLine(a.senders, b.senders, n)}]  receiver ${split(a.receiver, b.receiver, n)}\n`
  }
  return out
}

/** Each thread's user+system µs per item, in tid order. */
function byTid (a: Threads, b: Threads, n: number): string {
  const tid = (name: string): number => Number(name.split('#')[1] ?? 0)
  return [...b].sort(([x], [y]) => tid(x) - tid(y)).map(([name, t]) => {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    return `${name.endsWith(MAIN) ? 'main' : tid(name)} ${((t.user - s.user + t.sys - s.sys) * 1000 / n).toFixed(0)}`
  }).join(', ')
}

function optionsOf (argv: string[]): { opts: FanInOptions, slices: number } {
  const num = (i: number): number | undefined => argv[i] === undefined ? undefined : Number(argv[i])
  const warm = num(2)
  return {
    opts: { senders: num(0), perSender: num(1), warm },
    slices: num(3) ?? 6
  }
}

async function main (): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t5-threads-'))
  const { opts, slices } = optionsOf(process.argv.slice(2))
  try {
    const ctx = { ...toolContext(tmp), root: process.env.T5_ROOT ?? PROJECT_ROOT }
    const figures = await fanIn(ctx, async (receiver, senders, progress) => {
      const read = async (n: number): Promise<Mark> => ({
        at: nowMs(), accepted: progress.accepted(), delivered: n, senders: sumThreads(await Promise.all(senders.map(async (p) => await threads(p)))), receiver: await threads(receiver)
      })
      // what the hosts use while nothing is sent, just before the burst: the part of the burst's CPU that is time-bound, not per packet
      const i0 = await read(0)
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
      const i1 = await read(0)
      process.stdout.write(`idle ${IDLE_MS} ms before the burst: senders ${idleLine(i0.senders, i1.senders)}, receiver ${idleLine(i0.receiver, i1.receiver)}\n`)
      const one0 = await threads(senders[0], true)
      const first = await read(0)
      const marks: Mark[] = [first]
      let sampling = true
      let total = 0
      const sampler = (async () => {
        // a mark each time the receiver holds another slice's worth (the burst's size is known from the first call's answer below)
        while (sampling) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          const n = await progress.delivered()
          const step = total / slices
          if (total > 0 && n >= marks.length * step && n < total) marks.push(await read(n))
        }
      })()
      total = (opts.senders ?? 10) * (opts.perSender ?? 3000)
      return async (n) => {
        sampling = false
        await sampler
        const last = await read(n)
        marks.push(last)
        process.stdout.write(threadReport('senders ', first.senders, last.senders, n))
        process.stdout.write(threadReport('receiver', first.receiver, last.receiver, n))
        process.stdout.write(sliceReport(marks))
        process.stdout.write(`sender s0 by thread (tid order: main, V8's delayed-task loop, its workers (GC, compiler), libuv's pool, LevelDB's own), us per packet it sent: ${byTid(one0, await threads(senders[0], true), n / senders.length)}\n`)
      }
    }, opts)
    for (const f of figures) process.stdout.write(`${f.name} = ${f.value.toFixed(1)} ${f.unit}\n`)
  } finally {
    if (process.env.T5_KEEP === undefined) await rm(tmp, { recursive: true, force: true })
    else process.stdout.write(`hosts' homes (amesh.log) kept in ${tmp}\n`)
  }
}

await main()
