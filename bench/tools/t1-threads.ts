// Where the CPU of T1 (one packet in flight) goes, per thread of each daemon
// (user and system time from /proc/<pid>/task/<tid>/stat, ms per packet).
//   node --import ./dist/src/polyfill.js dist/bench/tools/t1-threads.js [SAMPLES [ROOT]]
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { p50 } from '../lib/stats.js'
import { latencySplit } from '../amesh/t1-latency.js'
import { startPair } from '../amesh/pair.js'

type Threads = Map<string, { user: number, sys: number }>

async function threads (pid: number): Promise<Threads> {
  const out: Threads = new Map()
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '')
    if (stat === '') continue
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const key = `${name}${tid === String(pid) ? ' (main)' : ''}`
    const prev = out.get(key) ?? { user: 0, sys: 0 }
    out.set(key, { user: prev.user + Number(f[11]) * 10, sys: prev.sys + Number(f[12]) * 10 })
  }
  return out
}

function report (label: string, a: Threads, b: Threads, n: number): void {
  for (const [name, t] of b) {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    const u = (t.user - s.user) / n
    const y = (t.sys - s.sys) / n
    if (u + y > 0) process.stdout.write(`${label} ${name.padEnd(20)} user ${(u * 1000).toFixed(0).padStart(5)} us  sys ${(y * 1000).toFixed(0).padStart(5)} us per packet\n`)
  }
}

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 300)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t1-threads-'))
  const root = process.argv[3]
  const ctx = toolContext(tmp)
  const pair = await startPair(root === undefined ? ctx : { ...ctx, root }, 't1t')
  try {
    const a0 = await threads(pair.a.pid)
    const b0 = await threads(pair.b.pid)
    const r = await latencySplit(pair.a, pair.b, n, 0)
    report('sender  ', a0, await threads(pair.a.pid), n)
    report('receiver', b0, await threads(pair.b.pid), n)
    process.stdout.write(`T1 p50 ${p50(r.total).toFixed(2)} ms\n`)
  } finally {
    await pair.stop()
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
