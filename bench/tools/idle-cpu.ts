// CPU of a just-started pair of hosts while idle, second by second, from
// /proc (process and main thread): what runs beside T1's one packet in flight.
//   node --import ./dist/src/polyfill.js dist/bench/tools/idle-cpu.js [SECONDS]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { cpuMsOf } from '../lib/cpu.js'
import { startPair } from '../amesh/pair.js'

async function main (): Promise<void> {
  const seconds = Number(process.argv[2] ?? 10)
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-idle-cpu-'))
  const pair = await startPair(toolContext(tmp), 'idle')
  try {
    const read = async (): Promise<number[]> => await Promise.all([pair.a.pid, pair.b.pid].flatMap((pid) => [cpuMsOf(pid), cpuMsOf(pid, true)]).map(async (p) => (await p) ?? 0))
    let last = await read()
    for (let s = 0; s < seconds; s++) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const now = await read()
      process.stdout.write(`${s + 1}s  sender ${now[0] - last[0]} ms (main ${now[1] - last[1]})  receiver ${now[2] - last[2]} ms (main ${now[3] - last[3]})\n`)
      last = now
    }
  } finally {
    await pair.stop()
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
