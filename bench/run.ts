// Benchmark runner: `node --import ./dist/src/polyfill.js dist/bench/run.js
// [--quick] [--only NAME,...] [--list] [--strict] [--out DIR]`.
import { mkdtemp, rm } from 'node:fs/promises'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { baselines } from './baselines/index.js'
import { ameshMeasurements } from './amesh/index.js'
import { POLYFILL, PROJECT_ROOT } from './lib/proc.js'
import { nowMs } from './lib/stats.js'
import { formatTable, machineInfo, resolveFigures, writeReport, type MeasurementError, type RunReport } from './lib/report.js'
import type { BenchContext, Figure, Measurement } from './lib/types.js'

/** Every real measurement, baselines first. amesh's own live in bench/amesh/. */
export const registry: Measurement[] = [...baselines, ...ameshMeasurements]

interface Options { quick: boolean, only: string[], list: boolean, strict: boolean, out: string }

const USAGE = 'usage: run.js [--quick] [--only NAME,...] [--list] [--strict] [--out DIR]'

function parseArgs (argv: string[]): Options {
  const opts: Options = { quick: false, only: [], list: false, strict: false, out: join(PROJECT_ROOT, 'bench', 'results') }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--quick') opts.quick = true
    else if (a === '--list') opts.list = true
    else if (a === '--strict') opts.strict = true
    else if (a === '--only') opts.only.push(...(argv[++i] ?? '').split(',').filter(s => s !== ''))
    else if (a.startsWith('--only=')) opts.only.push(...a.slice(7).split(',').filter(s => s !== ''))
    else if (a === '--out') opts.out = argv[++i] ?? opts.out
    else throw new Error(`unknown argument ${a}\n${USAGE}`)
  }
  return opts
}

function byName (name: string): Measurement {
  const m = registry.find(r => r.name.toLowerCase() === name.toLowerCase())
  if (m === undefined) throw new Error(`unknown measurement ${name}; known: ${registry.map(r => r.name).join(', ')}`)
  return m
}

/** The selected measurements plus the baselines they name, in registry order. */
export function select (only: string[]): Measurement[] {
  if (only.length === 0) return registry
  const want = new Set<Measurement>()
  const add = (m: Measurement): void => {
    if (want.has(m)) return
    want.add(m)
    for (const b of m.baselines ?? []) add(byName(b))
  }
  for (const name of only) add(byName(name))
  return registry.filter(m => want.has(m))
}

function makeContext (quick: boolean, dirs: string[]): BenchContext {
  const base = process.env.AMESH_BENCH_TMP ?? tmpdir()
  process.on('exit', () => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
  return {
    quick,
    count: (full, q) => quick ? q : full,
    tmpDir: async prefix => {
      const dir = await mkdtemp(join(base, `amesh-bench-${prefix}-`))
      dirs.push(dir)
      return dir
    },
    polyfill: POLYFILL,
    root: PROJECT_ROOT,
    log: message => { process.stderr.write(`  ${message}\n`) }
  }
}

async function runOne (m: Measurement, ctx: BenchContext): Promise<Figure[]> {
  process.stderr.write(`> ${m.name}: ${m.description}\n`)
  const figures = await m.run(ctx)
  for (const f of figures) ctx.log(`${f.name} = ${f.value.toPrecision(4)} ${f.unit}`)
  return figures
}

function errorText (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

async function main (): Promise<number> {
  const opts = parseArgs(process.argv.slice(2))
  if (opts.list) {
    for (const m of registry) process.stdout.write(`${m.name.padEnd(12)} ${m.description}\n`)
    return 0
  }
  const chosen = select(opts.only)
  const dirs: string[] = []
  const ctx = makeContext(opts.quick, dirs)
  const startedAt = new Date().toISOString()
  const loadAtStart = machineInfo().loadAvg?.[0] ?? 0
  const results: Array<[string, Figure[]]> = []
  const errors: MeasurementError[] = []
  const durationsMs: Record<string, number> = {}
  for (const m of chosen) {
    const t0 = nowMs()
    try {
      results.push([m.name, await runOne(m, ctx)])
    } catch (err) {
      errors.push({ measurement: m.name, message: errorText(err) })
      process.stderr.write(`  ${m.name} FAILED: ${errorText(err)}\n`)
    }
    durationsMs[m.name] = Math.round(nowMs() - t0)
  }
  await Promise.all(dirs.map(async d => { await rm(d, { recursive: true, force: true }) }))
  const figures = resolveFigures(results)
  const machine = machineInfo()
  machine.loadAvg = [loadAtStart, ...(machine.loadAvg ?? [])]
  const report: RunReport = {
    startedAt, finishedAt: new Date().toISOString(), quick: opts.quick, only: opts.only,
    machine, durationsMs, figures, errors
  }
  process.stdout.write('\n' + formatTable(figures) + '\n')
  process.stdout.write(`load average (1 min) at start/end: ${machine.loadAvg.join(' / ')} on ${machine.cpus} CPUs\n`)
  const file = await writeReport(opts.out, report)
  process.stdout.write(`\nresults: ${file}\n`)
  const failed = figures.some(f => f.verdict === 'FAIL')
  if (errors.length > 0) process.stdout.write(`errors: ${errors.map(e => e.measurement).join(', ')}\n`)
  return errors.length > 0 || (opts.strict && failed) ? 1 : 0
}

main().then(code => process.exit(code), (err: unknown) => {
  process.stderr.write(`${errorText(err)}\n`)
  process.exit(2)
})
