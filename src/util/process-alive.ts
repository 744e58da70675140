// Whether a process id names a live process. `kill(pid, 0)` alone also
// succeeds for a zombie: a process that has exited but was not yet reaped by
// its parent. A daemon started detached is reaped by whatever adopted it (init,
// a container's PID 1), which may do so late or, in a container without an
// init, never; until then `amesh down` would wait for a process that is gone
// and `amesh up` would refuse to start beside it. On Linux the state letter in
// /proc/PID/stat tells: Z (zombie) and X (dead) have exited.
import { readFileSync } from 'node:fs'

/** The state letter of a process from /proc (Linux), or undefined where /proc does not say. */
export function procState (pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
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
  const state = procState(pid)
  return state !== 'Z' && state !== 'X'
}
