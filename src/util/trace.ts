// Latency trace along one packet's path, off unless AMESH_TRACE names a file
// prefix: each mark is the monotonic clock (ns, CLOCK_MONOTONIC: the same
// clock in every process of the machine), the process's CPU time so far
// (user + system, µs) and a stage name, kept in memory and written to
// `<prefix>.<pid>` when the process exits. Read by
// bench/tools/t1-trace.ts, which lines the daemons' marks up with its own.
import { writeFileSync } from 'node:fs'
import { PerformanceObserver, constants, performance } from 'node:perf_hooks'

const prefix = process.env.AMESH_TRACE ?? ''

/** whether marks are kept (read once at start) */
export const TRACING = prefix !== ''

/** marks kept at most (a long run keeps its first ones) */
const MAX_MARKS = 2_000_000

const times: bigint[] = []
const stages: string[] = []
const cpus: number[] = []

/** Note that the path passed `stage` now (nothing unless tracing). */
export function mark (stage: string): void {
  if (!TRACING || stages.length >= MAX_MARKS) return
  times.push(process.hrtime.bigint())
  const cpu = process.cpuUsage()
  cpus.push(cpu.user + cpu.system)
  stages.push(stage)
}

/** perf_hooks' GC kinds by name */
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb'
}

/** Garbage collections as marks `gc <duration µs> <kind>` at their start (from perf_hooks, on the same clock). */
function watchGc (): void {
  const hr0 = process.hrtime.bigint()
  const p0 = performance.now()
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (stages.length >= MAX_MARKS) return
      times.push(hr0 + BigInt(Math.round((e.startTime - p0) * 1e6)))
      cpus.push(-1)
      const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0
      stages.push(`gc ${Math.round(e.duration * 1000)} ${GC_KINDS[kind] ?? String(kind)}`)
    }
  })
  obs.observe({ entryTypes: ['gc'] })
}

function dump (): void {
  let out = ''
  for (let i = 0; i < stages.length; i++) out += `${times[i]} ${cpus[i]} ${stages[i]}\n`
  writeFileSync(`${prefix}.${process.pid}`, out)
}

if (TRACING) { process.on('exit', dump); watchGc() }
