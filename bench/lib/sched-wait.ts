// How long chosen threads waited for a CPU while runnable, and who ran on
// the CPUs meanwhile: `perf record -a` of the scheduler's switch and wake-up
// tracepoints (on CLOCK_MONOTONIC, the clock of AMESH_TRACE's marks), read
// back as run segments per CPU and wait intervals per watched thread. It
// tells a wait behind the process's own background threads (V8's compiler
// and GC helpers) from a wait behind other processes on a shared machine.
// Linux with `perf` and root (tracepoints) only.
import { perfRecord, perfScript, type PerfRun } from './perf-threads.js'
import { readdir } from 'node:fs/promises'

export interface Segment { cpu: number, tid: number, from: bigint, to: bigint }
export interface Wait { tid: number, from: bigint, to: bigint }
export interface SchedTrace { segments: Segment[][], waits: Wait[] }

/** Start recording switches and wake-ups on every CPU into `file`; resolves once perf had time to attach. */
export async function startSched (file: string): Promise<PerfRun> {
  return await perfRecord(['-a', '-e', 'sched:sched_switch', '-e', 'sched:sched_wakeup'], file)
}

/** Run segments per CPU and the wait intervals of the `watched` threads (wake-up or preemption until switched in). */
export async function readSched (file: string, watched: Set<number>): Promise<SchedTrace> {
  const segments: Segment[][] = []
  const waits: Wait[] = []
  const running = new Map<number, { tid: number, since: bigint }>()
  const waiting = new Map<number, bigint>()
  for (const line of (await perfScript(file, 'cpu,time,event,trace')).split('\n')) {
    const m = /^\s*\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:(sched_switch|sched_wakeup):\s+(.*)$/.exec(line)
    if (m === null) continue
    const cpu = Number(m[1])
    const at = BigInt(m[2]) * 1_000_000_000n + BigInt(m[3].padEnd(9, '0'))
    const body = m[5]
    if (m[4] === 'sched_wakeup') {
      const pid = Number(/\bpid=(\d+)/.exec(body)?.[1] ?? -1)
      if (watched.has(pid) && !waiting.has(pid)) waiting.set(pid, at)
      continue
    }
    const prev = Number(/prev_pid=(\d+)/.exec(body)?.[1] ?? -1)
    const state = /prev_state=(\S+)/.exec(body)?.[1] ?? ''
    const next = Number(/next_pid=(\d+)/.exec(body)?.[1] ?? -1)
    const cur = running.get(cpu)
    if (cur !== undefined) (segments[cpu] ??= []).push({ cpu, tid: cur.tid, from: cur.since, to: at })
    running.set(cpu, { tid: next, since: at })
    // preempted while runnable: waits from now until it runs again
    if (watched.has(prev) && state.startsWith('R')) waiting.set(prev, at)
    const since = waiting.get(next)
    if (since !== undefined) { waiting.delete(next); if (at > since) waits.push({ tid: next, from: since, to: at }) }
  }
  return { segments, waits }
}

/** µs each class of thread ran on the CPUs during [from, to), summed over the CPUs and divided by their count. */
export function whoRan (trace: SchedTrace, from: bigint, to: bigint, classOf: (tid: number) => string, out: Map<string, number>): void {
  const cpus = trace.segments.filter((s) => s !== undefined)
  for (const segs of cpus) {
    let lo = 0
    let hi = segs.length
    while (lo < hi) { const mid = (lo + hi) >> 1; if (segs[mid].to <= from) lo = mid + 1; else hi = mid }
    for (let j = lo; j < segs.length && segs[j].from < to; j++) {
      const s = segs[j]
      const a = s.from > from ? s.from : from
      const b = s.to < to ? s.to : to
      if (b <= a) continue
      const k = classOf(s.tid)
      out.set(k, (out.get(k) ?? 0) + Number(b - a) / 1000 / cpus.length)
    }
  }
}

/**
 * A process's threads by role, from their creation order (thread ids ascending): Node starts
 * the main thread, V8's platform (a delayed-task thread, then `v8Workers` workers), its
 * signal-watch thread, and later libuv's pool (and LevelDB's background thread, if any).
 */
export async function threadRoles (pid: number, v8Workers: number): Promise<Map<number, string>> {
  const tids = (await readdir(`/proc/${pid}/task`).catch(() => [])).map(Number).sort((x, y) => x - y)
  const out = new Map<number, string>()
  tids.forEach((tid, k) => out.set(tid, k === 0 ? 'main' : k === 1 ? 'v8-sched' : k <= 1 + v8Workers ? 'v8-worker' : k === 2 + v8Workers ? 'signal' : 'pool'))
  return out
}
