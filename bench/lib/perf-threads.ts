// Which thread of a process is on a CPU when: `perf record` of software
// cpu-clock samples (one per PERIOD_US of a thread's CPU time, on
// CLOCK_MONOTONIC: the clock of process.hrtime and of AMESH_TRACE's marks)
// over a set of processes, read back per thread id, with each thread's role
// guessed from where its samples fall (V8's workers, libuv's pool, LevelDB's
// background thread, the main thread). Linux with `perf` only.
import { spawn, type ChildProcess } from 'node:child_process'

/** CPU time per sample, µs (perf's cpu-clock period is in ns) */
export const PERIOD_US = 250

/** One cpu-clock sample: the thread, when (ns, CLOCK_MONOTONIC) and where (symbol, object). */
export interface PerfSample { pid: number, tid: number, at: bigint, sym: string, dso: string }

export interface PerfRun { stop: () => Promise<void> }

/** Start sampling the processes `pids` into `file` (kernel and user space, every PERIOD_US of CPU per thread). */
export async function startPerf (pids: number[], file: string): Promise<PerfRun> {
  return await perfRecord(['-e', 'cpu-clock', '-c', String(PERIOD_US * 1000), '-p', pids.join(',')], file)
}

/** `perf record` of `args` into `file` on CLOCK_MONOTONIC; resolves once perf had time to attach, stopped with SIGINT. */
export async function perfRecord (args: string[], file: string): Promise<PerfRun> {
  const child: ChildProcess = spawn('perf', ['record', '-q', ...args, '-k', 'CLOCK_MONOTONIC', '-o', file], { stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // perf attaches within a few ms; give it time before the samples start
  await new Promise((resolve) => setTimeout(resolve, 500))
  return {
    stop: async () => {
      child.kill('SIGINT')
      await exited
    }
  }
}

/** `perf script` of `file` with these fields (`-F`), times in ns: its whole output. */
export async function perfScript (file: string, fields: string): Promise<string> {
  return await new Promise<string>((resolve, reject) => {
    const child = spawn('perf', ['script', '-i', file, '--ns', '-F', fields], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (s: string) => { out += s })
    child.once('error', reject)
    child.once('exit', () => resolve(out))
  })
}

/** The samples of a perf.data file, in time order. */
export async function readPerf (file: string): Promise<PerfSample[]> {
  const text = await perfScript(file, 'pid,tid,time,ip,sym,dso')
  const out: PerfSample[] = []
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\/(\d+)\s+(\d+)\.(\d+):\s+(.*?)\s*\(([^)]*)\)\s*$/.exec(line)
    if (m === null) continue
    out.push({ pid: Number(m[1]), tid: Number(m[2]), at: BigInt(m[3]) * 1_000_000_000n + BigInt(m[4].padEnd(9, '0')), sym: m[5].replace(/^[0-9a-f]+\s+/, ''), dso: m[6] })
  }
  out.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0))
  return out
}

/** The last path part of an object's file name. */
const base = (dso: string): string => dso.slice(dso.lastIndexOf('/') + 1)

/**
 * A thread's role, from all its samples: the main thread (tid = pid); libuv's
 * pool (more of its samples in LevelDB's code, libuv or fdatasync than in
 * V8's); V8's platform workers (mostly V8's heap or compiler code); LevelDB's
 * background thread cannot be told from the pool by its samples alone (both
 * run LevelDB's code) and is counted with it.
 */
export function roleOf (tid: number, pid: number, samples: PerfSample[]): string {
  if (tid === pid) return 'main'
  let io = 0
  let v8 = 0
  for (const s of samples) {
    if (/classic-level/.test(s.dso) || /^uv_|^uv__|fdatasync|^napi_|^node::ThreadPoolWork/.test(s.sym)) io++
    if (V8_SYM.test(s.sym)) v8++
  }
  if (io >= v8 && io > 0) return 'libuv-pool'
  if (v8 > 0) return 'v8-worker'
  return 'other'
}

const V8_SYM = /^v8::|^Builtins_|^cppgc::|^heap::base::|^std::.*v8::internal/

/**
 * What a sample of a thread of `role` was doing: a V8 worker's split into its
 * garbage collector's work (concurrent marking, sweeping, parallel scavenge)
 * and its optimizing compiler's, other roles as they are.
 */
export function activityOf (s: PerfSample, role: string): string {
  if (role !== 'v8-worker') return role
  if (/compiler::|[Mm]aglev|[Tt]urbofan|Pipeline|Compil|Optimiz|Deoptimiz/.test(s.sym)) return 'v8-compile'
  if (/Mark|Sweep|Scaveng|Evacuat|Remembered|Slot|ArrayBuffer|Visit|MemoryChunk|Page|Heap|GC|Space|Body|Marking|Worklist/.test(s.sym) || /MemoryChunk/.test(s.sym)) return 'v8-gc'
  return 'v8-other'
}

/** The `top` symbols of some samples with their share, as `sym@dso n%`. */
export function topSymbols (samples: PerfSample[], top = 4): string {
  const count = new Map<string, number>()
  for (const s of samples) { const k = `${s.sym.slice(0, 60)}@${base(s.dso)}`; count.set(k, (count.get(k) ?? 0) + 1) }
  return [...count].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, n]) => `${k} ${(100 * n / samples.length).toFixed(0)}%`).join(', ')
}

/** The index of the first sample at or after `at` (samples in time order). */
export function firstAt (samples: PerfSample[], at: bigint): number {
  let lo = 0
  let hi = samples.length
  while (lo < hi) { const mid = (lo + hi) >> 1; if (samples[mid].at < at) lo = mid + 1; else hi = mid }
  return lo
}

/** The samples of process `pid` in [from, to). */
export function within (samples: PerfSample[], pid: number, from: bigint, to: bigint): PerfSample[] {
  const out: PerfSample[] = []
  for (let j = firstAt(samples, from); j < samples.length && samples[j].at < to; j++) if (samples[j].pid === pid) out.push(samples[j])
  return out
}
