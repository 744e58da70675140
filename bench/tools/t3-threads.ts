// Where the CPU of T3 (64 KiB packets, a burst) goes, per thread of each
// daemon (user+system time from /proc/<pid>/task/<tid>/stat, µs per
// packet), against one or more checkouts, alternated:
//   node --import ./dist/src/polyfill.js dist/bench/tools/t3-threads.js ROUNDS COUNT [ROOT...]
// ROOT is a checkout with a built dist/ and bin/amesh (default: this one).
// T3_SIZE (bytes, default 65536) changes the payload size; T3_KEEP=1 keeps the
// daemons' homes (their amesh.log, e.g. with AMESH_BENCH_NODE_ARGS=--trace-gc).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { perSecond } from '../lib/stats.js'
import { burst } from '../amesh/t2-throughput.js'
import { startPair } from '../amesh/pair.js'

type Threads = Map<string, { user: number, sys: number }>

async function threads (pid: number): Promise<Threads> {
  const out: Threads = new Map()
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '')
    if (stat === '') continue
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const key = tid === String(pid) ? `${name} (main)` : `${name}#${tid}`
    const prev = out.get(key) ?? { user: 0, sys: 0 }
    out.set(key, { user: prev.user + Number(f[11]) * 10, sys: prev.sys + Number(f[12]) * 10 })
  }
  return out
}

function report (a: Threads, b: Threads, n: number): string {
  const parts: string[] = []
  let total = 0
  for (const [name, t] of b) {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    const user = (t.user - s.user) * 1000 / n
    const sys = (t.sys - s.sys) * 1000 / n
    total += user + sys
    if (user + sys >= 5) parts.push(`${name} ${user.toFixed(0)}+${sys.toFixed(0)}`)
  }
  return `${total.toFixed(0)} [${parts.join(', ')}]`
}

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3)
  const n = Number(process.argv[3] ?? 1000)
  const size = Number(process.env.T3_SIZE ?? 65536)
  const roots = process.argv.length > 4 ? process.argv.slice(4) : [undefined]
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t3-threads-'))
  try {
    for (let i = 0; i < rounds; i++) {
      for (const root of roots) {
        const ctx = toolContext(tmp)
        const pair = await startPair(root === undefined ? ctx : { ...ctx, root }, 't3t')
        try {
          await burst(pair.a, pair.b, Math.max(1, Math.floor(n / 10)), size)
          const a0 = await threads(pair.a.pid)
          const b0 = await threads(pair.b.pid)
          const r = await burst(pair.a, pair.b, n, size)
          const sa = report(a0, await threads(pair.a.pid), n)
          const sb = report(b0, await threads(pair.b.pid), n)
          const mib = perSecond(n, r.elapsedMs) * size / 2 ** 20
          process.stdout.write(`${(root ?? '.').padEnd(22)} ${mib.toFixed(1)} MiB/s client ${r.cpu.client.toFixed(0)} | sender ${sa} | receiver ${sb} | load ${(await readFile('/proc/loadavg', 'utf8')).split(' ')[0]}\n`)
        } finally {
          await pair.stop()
        }
      }
    }
  } finally {
    if (process.env.T3_KEEP === '1') process.stdout.write(`kept ${tmp}\n`)
    else await rm(tmp, { recursive: true, force: true })
  }
}

await main()
