// System calls per T1 packet of each daemon of a pair: `strace -c -f` is
// attached to both while SAMPLES sends run one at a time (as T1), and the
// calls of each kind are divided by SAMPLES. A count does not move with the
// load of a shared machine as wall time and CPU do, so it shows what a change
// to the path's writes and wake-ups did (strace slows the daemons; the
// counts, not the times, are the figure).
//   node --import ./dist/src/polyfill.js dist/bench/tools/t1-syscalls.js [SAMPLES [ROOT...]]
// With several ROOTs (checkouts with a built dist/), each gets a pair in turn.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { latencySplit } from '../amesh/t1-latency.js'
import { startPair } from '../amesh/pair.js'

const CALLS = 'write,writev,read,readv,sendmsg,recvmsg,epoll_wait,epoll_pwait,fdatasync,fsync,futex'
const settle = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** `name per-packet` for each row of an strace -c summary. */
async function perPacket (file: string, samples: number): Promise<string> {
  const body = await readFile(file, 'utf8').catch(() => '')
  const rows = body.split('\n').filter((l) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+/.test(l)).map((l) => l.trim().split(/\s+/))
  return rows.map((r) => `${r[r.length - 1]} ${(Number(r[3]) / samples).toFixed(2)}`).join(', ')
}

async function once (samples: number, root: string | undefined): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t1-syscalls-'))
  const ctx = toolContext(tmp)
  const pair = await startPair(root === undefined ? ctx : { ...ctx, root }, 't1sc')
  try {
    await latencySplit(pair.a, pair.b, 50, 10)
    const pids = [pair.a.pid, pair.b.pid]
    const tracers = pids.map((pid) => spawn('strace', ['-c', '-f', '-e', `trace=${CALLS}`, '-o', join(tmp, `sc.${pid}`), '-p', String(pid)], { stdio: 'ignore' }))
    await settle(1500) // attached to every thread
    await latencySplit(pair.a, pair.b, samples, 0)
    for (const t of tracers) t.kill('SIGINT')
    await settle(1500) // summaries written
    process.stdout.write(`${root ?? 'this checkout'}: ${samples} samples, calls per packet\n`)
    process.stdout.write(`  sender:   ${await perPacket(join(tmp, `sc.${pids[0]}`), samples)}\n`)
    process.stdout.write(`  receiver: ${await perPacket(join(tmp, `sc.${pids[1]}`), samples)}\n`)
  } finally {
    await pair.stop()
    await rm(tmp, { recursive: true, force: true })
  }
}

const samples = Number(process.argv[2] ?? 300)
const roots = process.argv.length > 3 ? process.argv.slice(3) : [undefined]
for (const root of roots) await once(samples, root)
