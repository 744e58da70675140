// The daemon's V8 worker threads run at the lowest CPU priority (Linux).
// Measured (docs/PERFORMANCE.md, session 12): in T1, one packet in flight,
// the slow 1 % of packets were packets whose main or libuv-pool thread (the
// path: request, commit, frame, ack) woke up while V8's optimizing compiler
// (TurboFan, ~300 functions tiered up over the first tens of seconds, ~270
// µs of CPU per packet then) and the major GC's concurrent marking ran on
// the worker threads of the same or the other daemon, and waited for a core
// behind them. Nothing waits for a worker's compile job (the code runs
// unoptimized until it is done), so at the lowest priority that work runs on
// cores the path leaves free instead of in front of the path. The workers
// also run the GC's helper tasks, and a scavenge's main thread joins its
// helpers: on a machine whose cores are all busy a helper at nice 19 can
// hold a scavenge up. Measured: T2's CPU per packet and rate did not move;
// `--single-threaded-gc` (no helpers at all) was tried beside it and not
// kept: it put 10-15 µs per packet more on the sender's main thread in T2.
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** the nice value the V8 workers get (the lowest priority) */
export const V8_WORKER_NICE = 19

/** Node's default number of V8 platform workers (`--v8-pool-size`). */
const DEFAULT_V8_WORKERS = 4

/** The number of V8 workers the node flags ask for; undefined when node chooses (`--v8-pool-size=0`). */
export function v8Workers (flags: readonly string[]): number | undefined {
  let n = DEFAULT_V8_WORKERS
  for (const f of flags) {
    const m = /^--v8[-_]pool[-_]size=(\d+)$/.exec(f)
    if (m !== null) n = Number(m[1])
  }
  return n > 0 ? n : undefined
}

/**
 * The thread ids of the V8 workers among a process's threads, from their
 * creation order (ids ascending, as Linux hands them out): Node starts the
 * main thread, then V8's platform (its delayed-task thread, then the
 * `workers` worker threads), then its signal-watch thread and later libuv's
 * pool. Empty when the threads do not fit that layout.
 */
export function v8WorkerTids (tids: readonly number[], pid: number, workers: number): number[] {
  const sorted = [...tids].sort((x, y) => x - y)
  if (sorted[0] !== pid || sorted.length < workers + 2) return []
  return sorted.slice(2, 2 + workers)
}

/**
 * Give this process's V8 workers the lowest priority; returns their thread
 * ids (none where threads cannot be listed or reniced: not Linux, a
 * restricted container, or `--v8-pool-size=0`). Call before the daemon
 * stack loads: only Node's own threads exist then.
 */
export function lowerV8Workers (flags: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]): number[] {
  if (process.platform !== 'linux') return []
  const workers = v8Workers(flags)
  if (workers === undefined) return []
  let tids: number[]
  try {
    tids = readdirSync('/proc/self/task').map(Number)
  } catch {
    return []
  }
  const picked = v8WorkerTids(tids, process.pid, workers)
  try {
    for (const tid of picked) setPriority(tid, V8_WORKER_NICE)
  } catch {
    return []
  }
  return picked
}
