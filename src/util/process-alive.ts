// Whether a process id names a live process. `kill(pid, 0)` alone also
// succeeds for a zombie: a process that has exited but was not yet reaped by
// its parent. A daemon started detached is reaped by whatever adopted it (init,
// a container's PID 1), which may do so late or, in a container without an
// init, never; until then `amesh down` would wait for a process that is gone
// and `amesh up` would refuse to start beside it. On Linux the state letter in
// /proc/PID/stat tells: Z (zombie) and X (dead) have exited.
// The letter in /proc/PID/stat is the main thread's only: after a kill -9 of a
// multi-threaded process (every daemon: libuv's pool, V8's workers) the main
// thread can be a zombie while other threads are still exiting, and those still
// hold the process's files: the store's LevelDB lock among them. So a process
// has exited only once every thread in /proc/PID/task is Z or X.
import { readdirSync, readFileSync } from 'node:fs'

/** The state letter of a process (its main thread) from /proc (Linux), or undefined where /proc does not say. */
export function procState (pid: number): string | undefined {
  return stateAt(`/proc/${pid}/stat`)
}

function stateAt (statPath: string): string | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8')
    // "PID (COMM) S ...": COMM may hold spaces and parentheses, so read after the last ')'
    const state = stat.charAt(stat.lastIndexOf(')') + 2)
    return state === '' ? undefined : state
  } catch {
    return undefined
  }
}

/** True while `pid` is a process that has not exited (EPERM: it exists, owned by another user). */
export function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (!exited(procState(pid))) return true
  return threadsLeft(pid)
}

function exited (state: string | undefined): boolean {
  return state === 'Z' || state === 'X'
}

/** Whether a thread of `pid` other than an exited one is still there (its main thread being a zombie). */
function threadsLeft (pid: number): boolean {
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return false
  }
  return tids.some((tid) => { const s = stateAt(`/proc/${pid}/task/${tid}/stat`); return s !== undefined && !exited(s) })
}
