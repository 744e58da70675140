// Steady state before a measurement: hosts that just started (or just joined
// a mesh) spend seconds on Noise handshakes, identify, DHT routing and card
// publishing. A throughput figure taken during that churn measures the churn.
// `waitQuiet` waits until the hosts together use less than `maxCpu` of one
// CPU over a window (CPU time from /proc/<pid>/stat), or gives up after
// `timeoutMs` and says so.
import { readFile } from 'node:fs/promises'
import { nowMs } from './stats.js'

/** clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux) */
const TICKS = 100

/** CPU seconds (user + system) a process has used, or undefined if it is gone. */
export async function cpuSeconds (pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    // fields after the command name (which is in parentheses and may hold spaces)
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(rest[11]) + Number(rest[12])) / TICKS
  } catch {
    return undefined
  }
}

async function total (pids: number[]): Promise<number> {
  let sum = 0
  for (const pid of pids) sum += (await cpuSeconds(pid)) ?? 0
  return sum
}

export interface Quiet { waitedMs: number, cpu: number, quiet: boolean }

/** Wait until `pids` together use < maxCpu (fraction of one CPU) over windowMs. */
export async function waitQuiet (pids: number[], opts: { maxCpu?: number, windowMs?: number, timeoutMs?: number } = {}): Promise<Quiet> {
  const maxCpu = opts.maxCpu ?? 0.1
  const windowMs = opts.windowMs ?? 1000
  const timeoutMs = opts.timeoutMs ?? 60_000
  const t0 = nowMs()
  for (;;) {
    const a = await total(pids)
    const s = nowMs()
    await new Promise((resolve) => setTimeout(resolve, windowMs))
    const cpu = (await total(pids) - a) / ((nowMs() - s) / 1000)
    const waitedMs = nowMs() - t0
    if (cpu < maxCpu) return { waitedMs, cpu, quiet: true }
    if (waitedMs >= timeoutMs) return { waitedMs, cpu, quiet: false }
  }
}
