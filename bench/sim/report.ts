// The simulation's output: a table on stdout and a JSON file under
// bench/results/ (sim-<scenario>-<time>.json).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Figures } from './scenarios.js'
import { drawGrowth } from './plot.js'

export interface SimRun { scenario: string, hosts: number, latency: number, seconds: number, figures: Figures }

export const RESULTS_DIR = join(process.cwd(), 'bench', 'results')

function stamp (): string { return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15) }

/** Rows: figures; columns: runs. */
export function table (runs: SimRun[]): string {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.figures)))]
  const head = ['figure', ...runs.map((r) => `${r.scenario} N=${r.hosts} ${r.latency}ms`)]
  const rows = [head, ['run seconds', ...runs.map((r) => String(r.seconds))], ...names.map((n) => [n, ...runs.map((r) => String(r.figures[n] ?? ''))])]
  const widths = head.map((_, c) => Math.min(60, Math.max(...rows.map((r) => r[c].length))))
  return rows.map((r) => r.map((cell, c) => cell.slice(0, 60).padEnd(widths[c])).join('  ')).join('\n')
}

const started = stamp()

/** Write (again) this run's JSON file and print the table; growth calls it after each N, so a cut-off run keeps what it measured. */
export async function writeResults (scenario: string, runs: SimRun[], plot: boolean): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = join(RESULTS_DIR, `sim-${scenario}-${started}.json`)
  writeFileSync(file, JSON.stringify({ scenario, at: new Date().toISOString(), node: process.version, runs }, null, 2) + '\n')
  process.stdout.write(table(runs) + '\n')
  process.stdout.write(`results: ${file}\n`)
  if (plot) for (const f of await drawGrowth(runs)) process.stdout.write(`plot: ${f}\n`)
  return file
}
