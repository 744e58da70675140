// Resolve ratios against baselines, print a table, write JSON results.
import { cpus, loadavg, platform, release, arch, totalmem, hostname } from 'node:os'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Figure } from './types.js'
import { sig } from './stats.js'

export type Verdict = 'PASS' | 'FAIL' | '-'

export interface ResolvedFigure extends Figure {
  measurement: string
  baselineValue?: number
  ratio?: number
  target?: string
  verdict: Verdict
}

export interface MeasurementError { measurement: string, message: string }

export interface MachineInfo {
  node: string
  cpus: number
  cpuModel: string
  os: string
  arch: string
  totalMemMiB: number
  host: string
  /** 1-minute load average when the run started and ended (a shared machine skews absolute figures) */
  loadAvg?: number[]
}

export interface RunReport {
  startedAt: string
  finishedAt: string
  quick: boolean
  only: string[]
  machine: MachineInfo
  durationsMs: Record<string, number>
  figures: ResolvedFigure[]
  errors: MeasurementError[]
}

export function machineInfo (): MachineInfo {
  const cpu = cpus()
  return {
    node: process.version,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    os: `${platform()} ${release()}`,
    arch: arch(),
    totalMemMiB: Math.round(totalmem() / (1024 * 1024)),
    host: hostname(),
    loadAvg: [Number(loadavg()[0].toFixed(2))]
  }
}

function targetText (f: Figure): string | undefined {
  const parts: string[] = []
  if (f.maxRatio !== undefined) parts.push(`<=${f.maxRatio}x`)
  if (f.minRatio !== undefined) parts.push(`>=${f.minRatio}x`)
  if (f.max !== undefined) parts.push(`<=${f.max} ${f.unit}`)
  if (f.min !== undefined) parts.push(`>=${f.min} ${f.unit}`)
  return parts.length === 0 ? undefined : parts.join(' ')
}

function verdict (f: Figure, ratio: number | undefined): Verdict {
  const checks: boolean[] = []
  if (f.maxRatio !== undefined) checks.push(ratio !== undefined && ratio <= f.maxRatio)
  if (f.minRatio !== undefined) checks.push(ratio !== undefined && ratio >= f.minRatio)
  if (f.max !== undefined) checks.push(f.value <= f.max)
  if (f.min !== undefined) checks.push(f.value >= f.min)
  if (checks.length === 0) return '-'
  return checks.every(Boolean) ? 'PASS' : 'FAIL'
}

/**
 * The value of a baseline reference: one figure name, or a sum of figure
 * names joined by '+' (e.g. 'B_rtt.p50+B_fsync.p50'); undefined if any is missing.
 */
function baselineValue (all: Map<string, Figure>, ref: string): number | undefined {
  let sum = 0
  for (const name of ref.split('+')) {
    const f = all.get(name.trim())
    if (f === undefined || !Number.isFinite(f.value)) return undefined
    sum += f.value
  }
  return sum
}

/** Attach baseline values, ratios and verdicts. A missing baseline fails a ratio target. */
export function resolveFigures (byMeasurement: Array<[string, Figure[]]>): ResolvedFigure[] {
  const all = new Map<string, Figure>()
  for (const [, figs] of byMeasurement) for (const f of figs) all.set(f.name, f)
  const out: ResolvedFigure[] = []
  for (const [measurement, figs] of byMeasurement) {
    for (const f of figs) {
      const baseValue = f.baseline === undefined ? undefined : baselineValue(all, f.baseline)
      const ratio = baseValue === undefined || baseValue === 0 ? undefined : f.value / baseValue
      out.push({ ...f, measurement, baselineValue: baseValue, ratio, target: targetText(f), verdict: verdict(f, ratio) })
    }
  }
  return out
}

function fmt (v: number | undefined, suffix = ''): string {
  return v === undefined ? '' : `${sig(v, 4)}${suffix}`
}

const HEADERS = ['figure', 'value', 'unit', 'baseline', 'base value', 'ratio', 'target', 'pass']

function row (f: ResolvedFigure): string[] {
  return [f.name, fmt(f.value), f.unit, f.baseline ?? '', fmt(f.baselineValue), fmt(f.ratio, 'x'), f.target ?? '', f.verdict]
}

export function formatTable (figures: ResolvedFigure[]): string {
  const rows = [HEADERS, ...figures.map(row)]
  const widths = HEADERS.map((_, i) => Math.max(...rows.map(r => r[i].length)))
  const line = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()
  const rule = widths.map(w => '-'.repeat(w)).join('  ')
  return [line(HEADERS), rule, ...rows.slice(1).map(line)].join('\n')
}

/** YYYY-MM-DD-HHMMSS in UTC. */
export function stamp (d: Date): string {
  const p = (n: number): string => n.toString().padStart(2, '0')
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-` +
    `${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`
}

/** Write <dir>/<stamp>.json and <dir>/latest.json; returns the stamped path. */
export async function writeReport (dir: string, report: RunReport): Promise<string> {
  await mkdir(dir, { recursive: true })
  const text = JSON.stringify(report, null, 2) + '\n'
  const file = join(dir, `${stamp(new Date(report.startedAt))}.json`)
  await writeFile(file, text)
  await writeFile(join(dir, 'latest.json'), text)
  return file
}
