// Draw the growth plots from result files already written:
//   node dist/bench/sim/plot-results.js bench/results/sim-*.json
// (runs of any scenario; the latest run per N and latency is drawn).
import { readFileSync } from 'node:fs'
import { drawGrowth } from './plot.js'
import type { SimRun } from './report.js'

const byKey = new Map<string, SimRun>()
for (const file of process.argv.slice(2)) {
  const { runs } = JSON.parse(readFileSync(file, 'utf8')) as { runs: SimRun[] }
  for (const r of runs) byKey.set(`${r.hosts}/${r.latency}`, r)
}
const runs = [...byKey.values()].sort((a, b) => a.hosts - b.hosts)
for (const f of await drawGrowth(runs)) process.stdout.write(`plot: ${f}\n`)
