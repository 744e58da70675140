// T5's links counted (10 sender hosts -> 1 receiver): the daemons run with
// AMESH_TRACE, and over the counted burst this counts each one's trace marks
// (frames sent and acks read on each sender's link, frames read and acks sent
// on the receiver, group commits, garbage collections) per 1,000 packets and
// packets per frame; after the run it opens each sender's store and counts
// its delivered receipts: batch records (`z!`, one per ack within
// DELIVERED_WINDOW_MS of the send) and per-id records (`h!<id>!delivered`,
// the late acks). `1 30000` is T2's shape (one sender, 512 in flight) for
// comparison. Counts, not CPU: the trace marks cost CPU themselves. The window ends when the
// receiver holds the last packet, so the acks of the last frames in flight fall after it.
//   node --import ./dist/src/polyfill.js dist/bench/tools/t5-frames.js [senders] [per sender] [warm-up per sender]
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { PROJECT_ROOT } from '../lib/proc.js'
import { fanIn } from '../amesh/t5-fanin.js'
import { openDb } from '../../src/store/db.js'
import { Bucket } from '../../src/store/schema.js'

/** The marks counted, in the order printed. */
const STAGES = ['link.frame', 'link.ack', 'rx.frame', 'rx.ack', 'commit.start'] as const

interface Counts { marks: Map<string, number>, gcs: number, gcUs: number, kinds: Map<string, number> }

/** Each stage's marks in the trace file between t0 and t1 (ns, CLOCK_MONOTONIC), and the GCs. */
async function countMarks (file: string, t0: bigint, t1: bigint): Promise<Counts> {
  const out: Counts = { marks: new Map(), gcs: 0, gcUs: 0, kinds: new Map() }
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const sp = line.indexOf(' ')
    if (sp < 0) continue
    const at = BigInt(line.slice(0, sp))
    if (at < t0 || at > t1) continue
    const stage = line.slice(line.indexOf(' ', sp + 1) + 1)
    if (stage.startsWith('gc ')) {
      const [, us, kind] = stage.split(' ')
      out.gcs++
      out.gcUs += Number(us)
      out.kinds.set(kind, (out.kinds.get(kind) ?? 0) + 1)
      continue
    }
    out.marks.set(stage, (out.marks.get(stage) ?? 0) + 1)
  }
  return out
}

function sum (all: Counts[]): Counts {
  const out: Counts = { marks: new Map(), gcs: 0, gcUs: 0, kinds: new Map() }
  for (const c of all) {
    for (const [k, v] of c.marks) out.marks.set(k, (out.marks.get(k) ?? 0) + v)
    for (const [k, v] of c.kinds) out.kinds.set(k, (out.kinds.get(k) ?? 0) + v)
    out.gcs += c.gcs
    out.gcUs += c.gcUs
  }
  return out
}

/** One line: each stage's marks per 1,000 packets, packets per frame, GCs. */
function line (label: string, c: Counts, packets: number): string {
  const per = (n: number): string => (n * 1000 / packets).toFixed(1)
  const parts = STAGES.filter((s) => (c.marks.get(s) ?? 0) > 0).map((s) => `${s} ${per(c.marks.get(s) ?? 0)}`)
  const frames = (c.marks.get('link.frame') ?? 0) + (c.marks.get('rx.frame') ?? 0)
  const ppf = frames > 0 ? ` | ${(packets / frames).toFixed(1)} packets per frame` : ''
  return `${label}: per 1,000 packets ${parts.join(', ')}, gc ${per(c.gcs)} [${[...c.kinds].map(([k, v]) => `${k} ${per(v)}`).join(', ')}] (wall ${(c.gcUs / packets).toFixed(1)} µs per packet)${ppf}\n`
}

/** The receiver's group commits over the burst: each one's wall and process-CPU ms, the frames read during it, and the gap before the next. */
async function commitTimeline (file: string, t0: bigint, t1: bigint): Promise<string> {
  let out = ''
  let start: { at: bigint, cpu: number } | undefined
  let lastDone: bigint | undefined
  let frames = 0
  for (const l of (await readFile(file, 'utf8')).split('\n')) {
    const [a, c, ...rest] = l.split(' ')
    if (rest.length === 0) continue
    const at = BigInt(a)
    if (at < t0 || at > t1) continue
    const stage = rest.join(' ')
    if (stage === 'rx.frame') frames++
    else if (stage === 'commit.start') { start = { at, cpu: Number(c) }; out += `  +${Number(at - t0) / 1e6 | 0} ms gap ${lastDone === undefined ? '-' : (Number(at - lastDone) / 1e6).toFixed(1)} frames-before ${frames}`; frames = 0 }
    else if (stage === 'commit.done' && start !== undefined) { out += ` commit ${(Number(at - start.at) / 1e6).toFixed(1)} ms wall ${((Number(c) - start.cpu) / 1000).toFixed(1)} ms cpu\n`; lastDone = at; start = undefined }
    else if (stage.startsWith('gc ') && Number(stage.split(' ')[1]) > 2000) out += `  +${Number(at - t0) / 1e6 | 0} ms ${stage}\n`
  }
  return `receiver's commits (T5_TIMELINE):\n${out}`
}

interface Receipts { batches: number, batched: number, perId: number }

/** A stopped sender's delivered receipts: batch records and the ids in them, per-id delivered records. */
async function receiptsOf (store: string): Promise<Receipts> {
  const db = await openDb(store)
  const out: Receipts = { batches: 0, batched: 0, perId: 0 }
  try {
    for await (const value of db.values({ gte: Bucket.receiptBatch, lt: `${Bucket.receiptBatch}\xff` })) {
      out.batches++
      // receipt-batches.ts's layout: format, at (float64), k strings (len u8 + bytes), then the item count (u16)
      const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      let pos = 10
      for (let k = b[9]; k > 0; k--) pos += 1 + b[pos]
      out.batched += b.readUInt16BE(pos)
    }
    for await (const key of db.keys({ gte: Bucket.receipt, lt: `${Bucket.receipt}\xff` })) if (key.endsWith('!delivered')) out.perId++
  } finally {
    await db.close()
  }
  return out
}

async function main (): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t5-frames-'))
  const argv = process.argv.slice(2)
  const num = (i: number): number | undefined => argv[i] === undefined ? undefined : Number(argv[i])
  const opts = { senders: num(0), perSender: num(1), warm: num(2) }
  const prefix = join(tmp, 'trace')
  let pids: { rx: number, tx: number[] } = { rx: 0, tx: [] }
  let t0 = 0n
  let t1 = 0n
  let packets = 0
  try {
    process.env.AMESH_TRACE = prefix
    const ctx = { ...toolContext(tmp), root: process.env.T5_ROOT ?? PROJECT_ROOT }
    const figures = await fanIn(ctx, async (receiver, senders) => {
      pids = { rx: receiver, tx: senders }
      t0 = process.hrtime.bigint()
      return async (n) => { t1 = process.hrtime.bigint(); packets = n }
    }, opts)
    delete process.env.AMESH_TRACE
    for (const f of figures) process.stdout.write(`${f.name} = ${f.value.toFixed(1)} ${f.unit} (traced)\n`)
    const tx = await Promise.all(pids.tx.map(async (p) => await countMarks(`${prefix}.${p}`, t0, t1)))
    const rx = await countMarks(`${prefix}.${pids.rx}`, t0, t1)
    process.stdout.write(line(`senders (${tx.length}) summed`, sum(tx), packets))
    process.stdout.write(line('sender s0 (per its own packets)', tx[0], packets / tx.length))
    process.stdout.write(line('receiver', rx, packets))
    if (process.env.T5_TIMELINE !== undefined) process.stdout.write(await commitTimeline(`${prefix}.${pids.rx}`, t0, t1))
    const homes = (await readdir(tmp)).filter((d) => d.startsWith('t5-s'))
    const r = await Promise.all(homes.map(async (h) => await receiptsOf(join(tmp, h, 'store'))))
    const all = r.reduce((a, x) => ({ batches: a.batches + x.batches, batched: a.batched + x.batched, perId: a.perId + x.perId }), { batches: 0, batched: 0, perId: 0 })
    process.stdout.write(`senders' delivered receipts (whole run, warm-ups included): ${all.batches} batch records holding ${all.batched} ids (${(all.batched / Math.max(1, all.batches)).toFixed(1)} each), ${all.perId} per-id records (late acks, beyond DELIVERED_WINDOW_MS)\n`)
  } finally {
    delete process.env.AMESH_TRACE
    if (process.env.T5_KEEP === undefined) await rm(tmp, { recursive: true, force: true })
    else process.stdout.write(`kept in ${tmp}\n`)
  }
}

await main()
