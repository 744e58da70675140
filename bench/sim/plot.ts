// The growth plots: lookup latency and memory per host against N, drawn by
// vega-lite (spec) and vega (SVG, no canvas), then @resvg/resvg-js (PNG).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import * as vega from 'vega'
import * as vegaLite from 'vega-lite'
import type { SimRun } from './report.js'

export const IMG_DIR = join(process.cwd(), 'docs', 'img')

interface Point { hosts: number, series: string, value: number }

function points (runs: SimRun[], series: Record<string, string>): Point[] {
  const out: Point[] = []
  for (const r of runs) {
    for (const [label, key] of Object.entries(series)) {
      const v = r.figures[key]
      if (typeof v === 'number') out.push({ hosts: r.hosts, series: `${label} (${r.latency} ms/hop)`, value: v })
    }
  }
  return out
}

function spec (title: string, yTitle: string, values: Point[]): vegaLite.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    width: 420,
    height: 260,
    background: 'white',
    data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'hosts', type: 'quantitative', title: 'hosts (N)', scale: { type: 'log' } },
      y: { field: 'value', type: 'quantitative', title: yTitle },
      color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 320, orient: 'bottom', columns: 2 } }
    }
  } as vegaLite.TopLevelSpec
}

async function draw (name: string, s: vegaLite.TopLevelSpec): Promise<string[]> {
  const view = new vega.View(vega.parse(vegaLite.compile(s).spec), { renderer: 'none' })
  const svg = await view.toSVG()
  view.finalize()
  mkdirSync(IMG_DIR, { recursive: true })
  const svgFile = join(IMG_DIR, `${name}.svg`)
  const pngFile = join(IMG_DIR, `${name}.png`)
  writeFileSync(svgFile, svg)
  writeFileSync(pngFile, new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true } }).render().asPng())
  return [svgFile, pngFile]
}

/** docs/img/sim-lookup.{svg,png} and docs/img/sim-memory.{svg,png} from growth runs. */
export async function drawGrowth (runs: SimRun[]): Promise<string[]> {
  const lookup = points(runs, { 'DHT lookup p50': 'lookup.dht.p50.ms', 'DHT lookup p99': 'lookup.dht.p99.ms' })
  const memory = points(runs, { 'RSS per host': 'memory.rss.MiB.per.host', 'heap per host': 'memory.heap.MiB.per.host' })
  return [
    ...await draw('sim-lookup', spec('amesh simulation: name lookup through the DHT', 'latency (ms)', lookup)),
    ...await draw('sim-memory', spec('amesh simulation: memory per host', 'MiB per host', memory))
  ]
}
