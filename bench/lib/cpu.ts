// CPU time per packet of each process in a measurement, from /proc/<pid>/stat
// (daemons) and process.cpuUsage (this process, the control client). On a
// shared machine wall-clock rates move with the neighbours' load; the CPU a
// process spends per packet moves far less, so it shows progress steadily.
import { readFile } from 'node:fs/promises'
import type { Figure } from './types.js'

/** CPU time (user + system, ms) a process has used so far, or undefined where /proc has none. */
export async function cpuMsOf (pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields 14 and 15 of stat (utime, stime), in clock ticks of 1/100 s
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/** A process whose CPU is sampled: a label and its pid. */
export interface CpuSubject { label: string, pid: number }

/** CPU µs per item of each subject (undefined: not readable) and of this process (`client`). */
export interface CpuPerItem { client: number, subjects: Record<string, number | undefined> }

/** Start counting; the returned function takes the number of items and gives µs per item. */
export async function startCpu (subjects: CpuSubject[]): Promise<(items: number) => Promise<CpuPerItem>> {
  const before = await Promise.all(subjects.map(async (s) => await cpuMsOf(s.pid)))
  const c0 = process.cpuUsage()
  return async (items) => {
    const c = process.cpuUsage(c0)
    const after = await Promise.all(subjects.map(async (s) => await cpuMsOf(s.pid)))
    const out: Record<string, number | undefined> = {}
    subjects.forEach((s, i) => {
      const a = before[i]
      const b = after[i]
      out[s.label] = a === undefined || b === undefined ? undefined : (b - a) * 1000 / items
    })
    return { client: (c.user + c.system) / items, subjects: out }
  }
}

/**
 * Figures `<prefix>.cpu.<label>` (µs per `item`) for the client and every
 * readable subject, and `<prefix>.cpu.total`, their sum.
 */
export function cpuFigures (prefix: string, cpu: CpuPerItem, item: string, what: string): Figure[] {
  const note = (who: string): string => `CPU time (user + system) per ${item} of ${who} during ${what}; steadier than the rate on a loaded machine`
  const figures: Figure[] = [{ name: `${prefix}.cpu.client`, value: cpu.client, unit: `us/${item}`, better: 'lower', note: note('the control client (bench process)') }]
  let total = cpu.client
  for (const [label, v] of Object.entries(cpu.subjects)) {
    if (v === undefined) continue
    total += v
    figures.push({ name: `${prefix}.cpu.${label}`, value: v, unit: `us/${item}`, better: 'lower', note: note(`the ${label}`) })
  }
  figures.push({ name: `${prefix}.cpu.total`, value: total, unit: `us/${item}`, better: 'lower', note: 'the sum of the processes above' })
  return figures
}
