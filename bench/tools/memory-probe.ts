// Where a host's memory goes under the T6 steps: prints RSS and V8 heap
// (status `memory`) of the sender and receiver while idle, during and after a
// burst, and while the sender holds N packets for a host that is down.
//   node --import ./dist/src/polyfill.js dist/bench/tools/memory-probe.js [burst] [queued]
// Extra daemon node flags come from AMESH_BENCH_NODE_ARGS, as for the bench.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sendMany, type Daemon } from '../lib/daemon.js'
import { waitFor } from '../lib/cli.js'
import { toolContext } from '../lib/tool-context.js'
import { RX, TX, startPair } from '../amesh/pair.js'

const MiB = 2 ** 20

/** kB of one field of /proc/<pid>/smaps_rollup */
const rollupField = (text: string, name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0)

/** Where the RSS that is not the V8 heap lives: anonymous (V8's spaces, malloc: LevelDB, libuv's pool) and file-backed (node's and the addons' code). */
async function smaps (pid: number): Promise<string> {
  try {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8')
    const f = (kb: number): string => (kb / 1024).toFixed(1).padStart(6)
    return `  anon ${f(rollupField(rollup, 'Anonymous'))} file ${f(rollupField(rollup, 'Rss') - rollupField(rollup, 'Anonymous'))}`
  } catch {
    return ''
  }
}

async function line (label: string, d: Daemon): Promise<void> {
  const st = await d.control.call('status')
  const m = st.memory
  const f = (k: string): string => (m[k] / MiB).toFixed(1).padStart(7)
  process.stdout.write(`${label.padEnd(26)} rss ${f('rss')}  heap ${f('heap_used')}/${f('heap_total')}  ext ${f('external')}  buf ${f('array_buffers')} MiB${await smaps(d.pid)}\n`)
}

async function main (): Promise<void> {
  const burstN = Number(process.argv[2] ?? 20_000)
  const queued = Number(process.argv[3] ?? 100_000)
  const root = await mkdtemp(join(tmpdir(), 'amesh-memprobe-'))
  const ctx = toolContext(root)
  const pair = await startPair(ctx, 'mem')
  try {
    await line('sender idle', pair.a)
    await line('receiver idle', pair.b)
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        await line('sender during burst', pair.a)
        await line('receiver during burst', pair.b)
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
    })()
    await sendMany(pair.a.control, TX, RX, burstN, 512, 512)
    await waitFor(async () => (await pair.a.status()).outbox.queued === 0 ? true : undefined, 60_000)
    sampling = false
    await sampler
    await line('sender after burst', pair.a)
    await line('receiver after burst', pair.b)
    await pair.b.stop()
    await waitFor(async () => (await pair.a.status()).peers.length === 0 ? true : undefined, 15_000)
    for (let done = 0; done < queued; done += 20_000) {
      await sendMany(pair.a.control, TX, RX, Math.min(20_000, queued - done), 512, 512)
      await line(`sender holding ${Math.min(queued, done + 20_000)}`, pair.a)
    }
  } finally {
    await pair.stop()
    await rm(root, { recursive: true, force: true })
  }
}

await main()
