// CPU time per packet of each process in a measurement, from /proc/<pid>/stat
// (daemons) and process.cpuUsage (this process, the control client). On a
// shared machine wall-clock rates move with the neighbours' load; the CPU a
// process spends per packet moves far less, so it shows progress steadily.
import { readFile } from 'node:fs/promises'
import type { Figure } from './types.js'

/**
 * CPU time (user + system, ms) a process has used so far, or undefined where
 * /proc has none. `mainThread`: only its main thread's (the JavaScript thread,
 * whose time bounds a daemon's rate on an idle machine; the process figure
 * adds LevelDB's and libuv's worker threads, which run beside it).
 */
export async function cpuMsOf (pid: number, mainThread = false): Promise<number | undefined> {
  try {
    const stat = await readFile(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields 14 and 15 of stat (utime, stime), in clock ticks of 1/100 s
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/** A process whose CPU is sampled: a label and its pid. */
export interface CpuSubject { label: string, pid: number }

/** CPU µs per item of each subject (undefined: not readable), of its main thread, and of this process (`client`). */
export interface CpuPerItem { client: number, subjects: Record<string, number | undefined>, main: Record<string, number | undefined> }

async function sample (subjects: CpuSubject[], mainThread: boolean): Promise<Array<number | undefined>> {
  return await Promise.all(subjects.map(async (s) => await cpuMsOf(s.pid, mainThread)))
}

function perItem (subjects: CpuSubject[], before: Array<number | undefined>, after: Array<number | undefined>, items: number): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {}
  subjects.forEach((s, i) => {
    const a = before[i]
    const b = after[i]
    out[s.label] = a === undefined || b === undefined ? undefined : (b - a) * 1000 / items
  })
  return out
}

/** Start counting; the returned function takes the number of items and gives µs per item. */
export async function startCpu (subjects: CpuSubject[]): Promise<(items: number) => Promise<CpuPerItem>> {
  const before = await sample(subjects, false)
  const beforeMain = await sample(subjects, true)
  const c0 = process.cpuUsage()
  return async (items) => {
    const c = process.cpuUsage(c0)
    const after = await sample(subjects, false)
    const afterMain = await sample(subjects, true)
    return { client: (c.user + c.system) / items, subjects: perItem(subjects, before, after, items), main: perItem(subjects, beforeMain, afterMain, items) }
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
  for (const [label, v] of Object.entries(cpu.main)) {
    if (v !== undefined) figures.push({ name: `${prefix}.cpu.${label}.main`, value: v, unit: `us/${item}`, better: 'lower', note: `CPU time per ${item} of the ${label}'s main (JavaScript) thread during ${what}, part of ${prefix}.cpu.${label}: what bounds its rate on an idle machine` })
  }
  return figures
}
