// Where the CPU of T5 (10 sender hosts -> 1 receiver) goes, per thread name:
// the sender hosts summed and the receiver, user and system µs per packet of
// the burst (from /proc/<pid>/task/<tid>/stat), beside the burst's figures.
//   node --import ./dist/src/polyfill.js dist/bench/tools/t5-threads.js
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { fanIn } from '../amesh/t5-fanin.js'
import { sumThreads, threadReport, threads } from '../lib/threads.js'

async function main (): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t5-threads-'))
  try {
    const figures = await fanIn(toolContext(tmp), async (receiver, senders) => {
      const r0 = await threads(receiver)
      const s0 = sumThreads(await Promise.all(senders.map(async (p) => await threads(p))))
      return async (n) => {
        const s1 = sumThreads(await Promise.all(senders.map(async (p) => await threads(p))))
        process.stdout.write(threadReport('senders ', s0, s1, n))
        process.stdout.write(threadReport('receiver', r0, await threads(receiver), n))
      }
    })
    for (const f of figures) process.stdout.write(`${f.name} = ${f.value.toFixed(1)} ${f.unit}\n`)
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
