// `npm run sim -- --hosts N --scenario formation|lookup|delivery|churn|growth [--latency MS]
// [--lookups K] [--sends K] [--concurrency C] [--sizes 100,300,1000] [--seed S] [--logs] [--no-plot]`:
// N real amesh hosts in this process on the in-memory transport and store
// (bench/sim/host.ts). Prints a table and writes bench/results/sim-*.json;
// growth also draws docs/img/sim-*.svg|png.
import { churn } from './churn.js'
import { SimNet } from './net.js'
import { writeResults, type SimRun } from './report.js'
import { delivery, formation, lookup, type Figures, type SimContext } from './scenarios.js'
import { seeded } from '../../src/util/seeded.js'

const SCENARIOS = ['formation', 'lookup', 'delivery', 'churn', 'growth'] as const
type Scenario = typeof SCENARIOS[number]

interface Args { hosts: number, scenario: Scenario, latency: number, lookups: number, sends: number, concurrency: number, sizes: number[], seed: number, logs: boolean, plot: boolean }

function parseArgs (argv: string[]): Args {
  const a: Args = { hosts: 100, scenario: 'formation', latency: 0, lookups: 10_000, sends: 10_000, concurrency: 64, sizes: [100, 300, 1000], seed: 16, logs: false, plot: true }
  for (let k = 0; k < argv.length; k++) {
    const key = argv[k]
    const v = (): string => { const x = argv[++k]; if (x === undefined) throw new Error(`${key} needs a value`); return x }
    const num = (): number => { const x = Number(v()); if (!Number.isFinite(x) || x < 0) throw new Error(`${key} needs a non-negative number`); return x }
    if (key === '--hosts') a.hosts = num()
    else if (key === '--scenario') { const s = v(); if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`--scenario must be one of ${SCENARIOS.join(', ')}`); a.scenario = s as Scenario }
    else if (key === '--latency') a.latency = num()
    else if (key === '--lookups') a.lookups = num()
    else if (key === '--sends') a.sends = num()
    else if (key === '--concurrency') a.concurrency = num()
    else if (key === '--seed') a.seed = num()
    else if (key === '--sizes') a.sizes = v().split(',').map(Number)
    else if (key === '--logs') a.logs = true
    else if (key === '--no-plot') a.plot = false
    else throw new Error(`unknown option ${key}`)
  }
  return a
}

function log (line: string): void { process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`) }

/** One net of `hosts`: formed, then the scenario's own figures. */
export async function runOnce (args: Args, hosts: number, scenario: Scenario): Promise<SimRun> {
  const ctx: SimContext = { hosts, latency: args.latency, lookups: args.lookups, sends: args.sends, concurrency: args.concurrency, rnd: seeded(args.seed), log }
  const net = new SimNet({ latency: args.latency, logs: args.logs })
  const t0 = Date.now()
  let figures: Figures = {}
  try {
    figures = await formation(ctx, net)
    if (scenario === 'lookup' || scenario === 'growth') figures = { ...figures, ...await lookup(ctx, net) }
    if (scenario === 'delivery' || scenario === 'growth') figures = { ...figures, ...await delivery(ctx, net) }
    if (scenario === 'churn') figures = { ...figures, ...await churn(ctx, net) }
  } finally {
    const s0 = Date.now()
    await net.stop()
    log(`stopped ${hosts} hosts in ${Date.now() - s0} ms`)
  }
  return { scenario, hosts, latency: args.latency, seconds: Math.round((Date.now() - t0) / 1000), figures }
}

async function main (): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const runs: SimRun[] = []
  if (args.scenario === 'growth') {
    for (const n of args.sizes) {
      log(`growth: ${n} hosts`)
      runs.push(await runOnce(args, n, 'growth'))
      await writeResults(args.scenario, runs, args.plot)
    }
  } else {
    runs.push(await runOnce(args, args.hosts, args.scenario))
  }
  if (args.scenario !== 'growth') await writeResults(args.scenario, runs, false)
  // libp2p leaves nothing that must finish; end the process
  process.exit(0)
}

main().catch((err) => { process.stderr.write(`sim failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`); process.exit(1) })
