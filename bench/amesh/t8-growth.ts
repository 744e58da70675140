// T8: T1 latency and T2 throughput between two directly connected hosts
// (mesh hosts 0 and 1) while the mesh grows to 2, 10 and 30 hosts.
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import { p50, p99, perSecond } from '../lib/stats.js'
import { latencySamples } from './t1-latency.js'
import { burst } from './t2-throughput.js'
import { Mesh, nodeName } from './mesh.js'
import { waitQuiet } from '../lib/quiet.js'

async function run (ctx: BenchContext): Promise<Figure[]> {
  const sizes = ctx.quick ? [4] : [2, 10, 30]
  const samples = ctx.count(500, 100)
  const count = ctx.count(10_000, 1000)
  const mesh = new Mesh(ctx, 't8')
  const figures: Figure[] = []
  try {
    for (const n of sizes) {
      let lat: number[]
      let r: Awaited<ReturnType<typeof burst>>
      try {
        await mesh.grow(n)
        const [root, child] = mesh.hosts
        await root.grant(nodeName(0), nodeName(1))
        // measured in the grown mesh, not during its start-up churn (as T7)
        const q = await waitQuiet(mesh.hosts.map((d) => d.pid), { maxCpu: 0.02 * n, windowMs: 2000, timeoutMs: 120_000 })
        ctx.log(`${n} hosts ${q.quiet ? 'quiet' : 'still busy'} after ${Math.round(q.waitedMs)} ms (${(q.cpu * 100).toFixed(0)} % of one core together)`)
        lat = await latencySamples(child, root, samples, 20, 512, nodeName(1), nodeName(0))
        r = await burst(child, root, count, 512, nodeName(1), nodeName(0))
      } catch (err) {
        const note = `failed at ${n} hosts: ${err instanceof Error ? err.message : String(err)}`
        ctx.log(note)
        figures.push({ name: `T8.${n}.failed`, value: 1, unit: 'runs', better: 'lower', max: 0, note })
        break
      }
      const note = `${n} hosts; host 1 -> host 0 (direct peers)`
      figures.push(
        { name: `T8.${n}.T1.p50`, value: p50(lat), unit: 'ms', better: 'lower', baseline: 'T1.p50', note },
        { name: `T8.${n}.T1.p99`, value: p99(lat), unit: 'ms', better: 'lower', baseline: 'T1.p99', note },
        { name: `T8.${n}.T2`, value: perSecond(count, r.elapsedMs), unit: 'msg/s', better: 'higher', baseline: 'T2', note }
      )
    }
    return figures
  } finally {
    await mesh.stop()
  }
}

export const t8: Measurement = {
  name: 'T8',
  description: 'growth: T1 and T2 between two hosts of a 2, 10 and 30 host mesh',
  baselines: ['T1', 'T2'],
  run
}
