// T4.read's pager on a time line: one daemon filled with N stored packets,
// then ROUNDS binary inbox.read replays (t4-replay.ts's loop, written out
// with marks), the daemon traced (AMESH_TRACE, src/util/trace.ts: request
// in, store read, frame built, reply written, its GCs) and this process
// marking each page's ask, first and last byte received, end of its reply
// and its render's start and end, all on the monotonic clock. Prints per
// page what each side did when, to see whether the two overlap.
//   node --import ./dist/src/polyfill.js dist/bench/tools/read-timeline.js [N] [ROUNDS]
// (AMESH_READ_LIMIT: entries per page, 10,000; AMESH_READ_SLICE=N: the render yields to the loop every N entries)
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Daemon, sendMany } from '../lib/daemon.js'
import { toolContext } from '../lib/tool-context.js'
import { settle } from '../amesh/t4-replay.js'
import { eachFollowEntry, EntryRenderer, followPageLast } from '../../src/control/follow-frames.js'
import { ReplyReader } from '../../src/control/client.js'

const now = (): bigint => process.hrtime.bigint()
const ms = (t: bigint, t0: bigint): string => (Number(t - t0) / 1e6).toFixed(1).padStart(7)

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000)
  const rounds = Number(process.argv[3] ?? 2)
  const limit = Number(process.env.AMESH_READ_LIMIT ?? 10_000)
  const slice = Number(process.env.AMESH_READ_SLICE ?? 0)
  const dir = await mkdtemp(join(tmpdir(), 'amesh-read-tl-'))
  const prefix = join(dir, 'trace')
  process.env.AMESH_TRACE = prefix
  const d = await Daemon.start(toolContext(dir), 'tl')
  const marks: Array<[bigint, string]> = []
  try {
    await d.ensureNode('src')
    await d.ensureNode('dst')
    await d.grant('dst', 'src')
    await sendMany(d.control, 'src', 'dst', n, 512, 512)
    await settle(d)
    // the client reads its socket through `onread` (chunks pushed, or read in place into a large frame): both marked
    let bytes = 0
    const got = (n: number): void => { bytes += n; marks.push([now(), `data ${n} total ${bytes}`]) }
    const { push, filled } = ReplyReader.prototype
    let inside = false // push calls filled (and itself) for a frame received in place: count the socket's read once
    const counted = <A>(f: (this: ReplyReader, a: A) => void, n: (a: A) => number) => function (this: ReplyReader, a: A): void {
      if (inside) { f.call(this, a); return }
      got(n(a))
      inside = true
      try { f.call(this, a) } finally { inside = false }
    }
    ReplyReader.prototype.push = counted(push, (chunk: Buffer) => chunk.length)
    ReplyReader.prototype.filled = counted(filled, (k: number) => k)
    for (let r = 0; r < rounds; r++) {
      marks.push([now(), `round ${r}`])
      const c0 = process.cpuUsage()
      const t0 = now()
      const ask = async (after: number): Promise<Uint8Array> => {
        marks.push([now(), 'ask'])
        const body = await d.control.callFrame('inbox.read', { node: 'dst', after, limit })
        marks.push([now(), 'reply'])
        return body
      }
      const renderer = new EntryRenderer()
      let got = 0
      for (let page = ask(0); ;) {
        const body = await page
        const last = followPageLast(body)
        if (last === undefined) break
        page = ask(last)
        marks.push([now(), 'render start'])
        for (const e of eachFollowEntry(body, renderer)) {
          if (e.seq > 0) got++
          // AMESH_READ_SLICE=N: a render that yields to the loop every N entries (the socket is read meanwhile)
          if (slice > 0 && got % slice === 0) await new Promise((resolve) => setImmediate(resolve))
        }
        marks.push([now(), 'render end'])
      }
      const c = process.cpuUsage(c0)
      process.stdout.write(`round ${r}: ${got} entries, wall ${(Number(now() - t0) / 1e3 / got).toFixed(1)} us/entry, client cpu ${((c.user + c.system) / got).toFixed(1)} us/entry\n`)
    }
  } finally {
    await d.stop()
  }
  const files = (await import('node:fs')).readdirSync(dir).filter((f) => f.startsWith('trace.'))
  const all: Array<[bigint, string]> = marks.map(([t, s]) => [t, `client ${s}`])
  for (const f of files) {
    for (const line of (await readFile(join(dir, f), 'utf8')).split('\n')) {
      const [at, , ...stage] = line.split(' ')
      if (stage.length === 0) continue
      const s = stage.join(' ')
      if (s.startsWith('gc ') || s.includes('inbox.read') || s.startsWith('read.')) all.push([BigInt(at), `daemon ${s}`])
    }
  }
  all.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
  // how much of the daemon's page building (request in .. frame built) fell inside the client's renders
  const spans = (from: string, to: string): Array<[bigint, bigint]> => {
    const out: Array<[bigint, bigint]> = []
    let open: bigint | undefined
    for (const [t, s] of all) {
      if (s === from) open = t
      else if (s === to && open !== undefined) { out.push([open, t]); open = undefined }
    }
    return out
  }
  const builds = spans('daemon ctl.in.inbox.read', 'daemon read.framed')
  const renders = spans('client render start', 'client render end')
  let built = 0n
  let inside = 0n
  for (const [b0, b1] of builds) {
    built += b1 - b0
    for (const [r0, r1] of renders) {
      const lo = b0 > r0 ? b0 : r0
      const hi = b1 < r1 ? b1 : r1
      if (hi > lo) inside += hi - lo
    }
  }
  // the part of each page's transfer left after the render: render end -> the next reply
  const tails = spans('client render end', 'client reply').map(([a, b]) => Number(b - a) / 1e6).sort((a, b) => a - b)
  process.stdout.write(`render end -> next reply: median ${(tails[tails.length >> 1] ?? 0).toFixed(1)} ms, max ${(tails[tails.length - 1] ?? 0).toFixed(1)} ms\n`)
  const waits = spans('client ask', 'daemon ctl.in.inbox.read').map(([a, b]) => Number(b - a) / 1e6).sort((a, b) => a - b)
  // which side the pager waits for: the daemon's page built after the client's render ended
  let daemonLate = 0
  let late = 0
  for (const [b0, b1] of builds) {
    const r = renders.find(([r0, r1]) => r0 <= b1 && r1 >= b0)
    if (r !== undefined && b1 > r[1]) { daemonLate++; late += Number(b1 - r[1]) / 1e6 }
  }
  process.stdout.write(`pages whose frame was built after the render it overlapped ended: ${daemonLate} of ${builds.length} (${late.toFixed(0)} ms in all)\n`)
  process.stdout.write(`daemon building pages ${(Number(built) / 1e6).toFixed(0)} ms, ${(Number(inside) / 1e6).toFixed(0)} ms of it while the client rendered (${(100 * Number(inside) / Math.max(1, Number(built))).toFixed(0)} %); ask -> daemon has it: median ${(waits[waits.length >> 1] ?? 0).toFixed(1)} ms, max ${(waits[waits.length - 1] ?? 0).toFixed(1)} ms\n`)
  const start = marks[0][0]
  // data events folded: first and last of a run
  let run: Array<[bigint, string]> = []
  const flush = (): void => {
    if (run.length === 0) return
    process.stdout.write(`${ms(run[0][0], start)}  ${run[0][1]}${run.length > 1 ? `  .. ${ms(run[run.length - 1][0], start)} ${run[run.length - 1][1]} (${run.length} chunks)` : ''}\n`)
    run = []
  }
  for (const [t, s] of all) {
    if (t < start) continue
    if (s.startsWith('client data')) { run.push([t, s]); continue }
    flush()
    process.stdout.write(`${ms(t, start)}  ${s}\n`)
  }
  flush()
  if (process.env.AMESH_REPLAY_KEEP === undefined) await rm(dir, { recursive: true, force: true })
}

await main()
