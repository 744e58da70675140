// T4 / T4.read in real processes, repeated, CPU per entry of each side: one
// daemon per build root (default: this checkout), each filled once with N
// stored 512 B packets, then ROUNDS rounds alternating the daemons, each round
// a binary follow from seq 0 and a binary inbox.read pager (t4-replay.ts's
// own loops, rendered in this process). Prints wall µs/entry, the daemon's
// CPU µs/entry (process and main thread) and this process's.
//   node --import ./dist/src/polyfill.js dist/bench/tools/replay-ab.js [N] [ROUNDS] [ROOT...]
// (a ROOT is a built checkout: its bin/amesh runs the daemon; the client is this build;
// AMESH_REPLAY_ONLY=follow|read runs one of the two, AMESH_REPLAY_KEEP=1 keeps the homes and logs)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Daemon, sendMany } from '../lib/daemon.js'
import { cpuMsOf } from '../lib/cpu.js'
import { nowMs } from '../lib/stats.js'
import { toolContext } from '../lib/tool-context.js'
import { followAll, readAllFramed, settle } from '../amesh/t4-replay.js'
import { PROJECT_ROOT } from '../lib/proc.js'

interface Cost { wall: number, daemon: number, main: number, client: number }

async function measure (d: Daemon, n: number, body: () => Promise<unknown>): Promise<Cost> {
  const d0 = await cpuMsOf(d.pid) ?? 0
  const m0 = await cpuMsOf(d.pid, true) ?? 0
  const c0 = process.cpuUsage()
  const t0 = nowMs()
  await body()
  const wall = nowMs() - t0
  const c = process.cpuUsage(c0)
  const d1 = await cpuMsOf(d.pid) ?? 0
  const m1 = await cpuMsOf(d.pid, true) ?? 0
  return { wall: wall * 1000 / n, daemon: (d1 - d0) * 1000 / n, main: (m1 - m0) * 1000 / n, client: (c.user + c.system) / n }
}

const fmt = (c: Cost): string => `wall ${c.wall.toFixed(1).padStart(5)}  daemon ${c.daemon.toFixed(1).padStart(5)} (main ${c.main.toFixed(1).padStart(5)})  client ${c.client.toFixed(1).padStart(5)}`

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000)
  const rounds = Number(process.argv[3] ?? 3)
  // AMESH_REPLAY_ONLY=follow or read: that replay alone
  const only = process.env.AMESH_REPLAY_ONLY
  const roots = process.argv.length > 4 ? process.argv.slice(4) : [PROJECT_ROOT]
  const dir = await mkdtemp(join(tmpdir(), 'amesh-replay-ab-'))
  const daemons: Daemon[] = []
  try {
    for (const [k, root] of roots.entries()) {
      const d = await Daemon.start({ ...toolContext(dir), root }, `r${k}`)
      daemons.push(d)
      await d.ensureNode('src')
      await d.ensureNode('dst')
      await d.grant('dst', 'src')
      await sendMany(d.control, 'src', 'dst', n, 512, 512)
      process.stdout.write(`r${k} ${root}: filled ${n}, home ${d.home}\n`)
    }
    for (const d of daemons) await settle(d)
    for (let r = 0; r < rounds; r++) {
      for (const [k, d] of daemons.entries()) {
        const f = only === 'read' ? undefined : await measure(d, n, async () => await followAll(d, 'dst', n, 'binary'))
        const p = only === 'follow' ? undefined : await measure(d, n, async () => await readAllFramed(d.control, 'dst', n))
        process.stdout.write(`round ${r} r${k}  follow: ${f === undefined ? '-' : fmt(f)}   read: ${p === undefined ? '-' : fmt(p)}\n`)
      }
    }
  } finally {
    for (const d of daemons) await d.stop()
    if (process.env.AMESH_REPLAY_KEEP === undefined) await rm(dir, { recursive: true, force: true })
  }
}

await main()
