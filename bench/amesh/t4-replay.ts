// T4: a consumer replays N packets stored in one node's inbox.
// The packets are stored first by local sends (node src -> node dst on the
// same host, through the control socket); then a fresh control connection
// follows dst's inbox from seq 0 (`inbox.follow`, what `amesh inbox --follow`
// and the MCP face use) and the clock runs until the last entry arrives.
// Between the fill and the replays the daemon is left to go idle (its
// LevelDB compacts what the fill wrote, on its own threads).
// T4.read pages through the same inbox with `inbox.read` (limit 10,000) in
// binary frames rendered here (`amesh inbox`), T4.read.json in JSON replies.
import { Daemon, followInbox, sendMany } from '../lib/daemon.js'
import { cpuMsOf } from '../lib/cpu.js'
import { nowMs, perSecond } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import type { ControlClient } from '../../src/control/client.js'
import { eachFollowEntry, EntryRenderer, followPageLast } from '../../src/control/follow-frames.js'
import { WINDOW } from './t2-throughput.js'

/**
 * CPU per entry (us) of the daemon (all its threads; `main`: its JavaScript
 * thread alone, without LevelDB's compactions and V8's helper threads) and of
 * this process (the consumer) while `body` runs.
 */
async function cpuPerEntry (d: Daemon, count: number, body: () => Promise<number>): Promise<{ ms: number, daemon?: number, main?: number, client: number }> {
  const d0 = await d.cpuMs()
  const m0 = await cpuMsOf(d.pid, true)
  const c0 = process.cpuUsage()
  const ms = await body()
  const c = process.cpuUsage(c0)
  const d1 = await d.cpuMs()
  const m1 = await cpuMsOf(d.pid, true)
  const daemon = d0 === undefined || d1 === undefined ? undefined : (d1 - d0) * 1000 / count
  const main = m0 === undefined || m1 === undefined ? undefined : (m1 - m0) * 1000 / count
  return { ms, daemon, main, client: (c.user + c.system) / count }
}

/** a daemon using less CPU than this share of one core over SETTLE_STEP_MS, SETTLE_QUIET times in a row, is idle */
const SETTLE_SHARE = 0.05
const SETTLE_STEP_MS = 1000
const SETTLE_QUIET = 2
const SETTLE_MAX_MS = 30_000

/**
 * Wait until the daemon is idle after the fill (LevelDB compacting what was
 * written, receipts settling, all on the daemon's threads), so the replay's
 * CPU per entry is the replay's own. Returns how long it took (ms).
 */
/** T4's fill: `count` local 512 B sends src -> dst (dst granted src), WINDOW in flight; returns how long the sends took (ms). */
export async function fillInbox (d: Daemon, count: number): Promise<number> {
  await d.ensureNode('src')
  await d.ensureNode('dst')
  await d.grant('dst', 'src')
  const tf = nowMs()
  await sendMany(d.control, 'src', 'dst', count, 512, WINDOW)
  return nowMs() - tf
}

export async function settle (d: Daemon): Promise<number> {
  const t0 = nowMs()
  let last = await d.cpuMs()
  let quiet = 0
  while (last !== undefined && quiet < SETTLE_QUIET && nowMs() - t0 < SETTLE_MAX_MS) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_STEP_MS))
    const now = await d.cpuMs()
    if (now === undefined) break
    quiet = now - last < SETTLE_SHARE * SETTLE_STEP_MS ? quiet + 1 : 0
    last = now
  }
  return nowMs() - t0
}

export async function followAll (d: Daemon, node: string, count: number, framing: 'ndjson' | 'binary'): Promise<number> {
  let n = 0
  let lastSeq = 0
  let done!: (t: number) => void
  const finished = new Promise<number>((resolve) => { done = resolve })
  const t0 = nowMs()
  const f = await followInbox(d, node, 0, (e, at) => {
    if (e.seq !== lastSeq + 1) throw new Error(`replay gap: seq ${e.seq} after ${lastSeq}`)
    lastSeq = e.seq
    if (++n === count) done(at)
  }, framing)
  const timer = setTimeout(() => done(Number.NaN), 300_000)
  const t1 = await finished
  clearTimeout(timer)
  f.close()
  if (!Number.isFinite(t1)) throw new Error(`replay: ${n} of ${count} entries within 300 s`)
  return t1 - t0
}

/**
 * T4.read in binary frames, as a pager does it: the next page is asked for
 * (after the last seq, read from the frame's lengths) before this one is
 * rendered, so the daemon reads the next page while this process renders.
 */
export async function readAllFramed (c: ControlClient, node: string, count: number): Promise<number> {
  const t0 = nowMs()
  const ask = async (after: number): Promise<Uint8Array> => await c.callFrame('inbox.read', { node, after, limit: 10_000 })
  let n = 0
  let expect = 1
  // one renderer for every page, as amesh inbox's reader keeps one per stream
  const renderer = new EntryRenderer()
  for (let page = ask(0); ;) {
    const body = await page
    const last = followPageLast(body)
    if (last === undefined) break
    page = ask(last)
    for (const e of eachFollowEntry(body, renderer)) {
      if (e.seq !== expect++) throw new Error(`inbox.read gap: seq ${e.seq}`)
      n++
    }
  }
  if (n !== count) throw new Error(`inbox.read returned ${n} of ${count}`)
  return nowMs() - t0
}

async function readAll (c: ControlClient, node: string, count: number): Promise<number> {
  const t0 = nowMs()
  let after = 0
  let n = 0
  for (;;) {
    const page = await c.call('inbox.read', { node, after, limit: 10_000 })
    if (page.length === 0) break
    n += page.length
    after = page[page.length - 1].seq
  }
  if (n !== count) throw new Error(`inbox.read returned ${n} of ${count}`)
  return nowMs() - t0
}

async function run (ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.count(100_000, 5000)
  const d = await Daemon.start(ctx, 't4')
  try {
    const fillMs = await fillInbox(d, count)
    const held = await d.rss()
    const settled = await settle(d)
    const follow = await cpuPerEntry(d, count, async () => await followAll(d, 'dst', count, 'binary'))
    const ndjson = await cpuPerEntry(d, count, async () => await followAll(d, 'dst', count, 'ndjson'))
    const read = await cpuPerEntry(d, count, async () => await readAllFramed(d.control, 'dst', count))
    const readJson = await cpuPerEntry(d, count, async () => await readAll(d.control, 'dst', count))
    const followMs = follow.ms
    const readMs = read.ms
    const note = `${count} stored 512 B packets (daemon idle after the fill first: ${Math.round(settled)} ms)`
    const figures: Figure[] = [
      { name: 'T4', value: perSecond(count, followMs), unit: 'entries/s', better: 'higher', baseline: 'B_iter', minRatio: 0.5, note: `${note}, inbox.follow from seq 0, binary pages rendered by the client (amesh inbox --follow)` },
      { name: 'T4.ndjson', value: perSecond(count, ndjson.ms), unit: 'entries/s', better: 'higher', baseline: 'B_iter', note: `${note}, inbox.follow from seq 0, NDJSON events (scripts, --json, the faces)` },
      { name: 'T4.read', value: perSecond(count, readMs), unit: 'entries/s', better: 'higher', baseline: 'B_iter', minRatio: 0.5, note: `${note}, inbox.read pages of 10,000, binary frames rendered by the client (amesh inbox), the next page asked for before this one is rendered` },
      { name: 'T4.read.json', value: perSecond(count, readJson.ms), unit: 'entries/s', better: 'higher', baseline: 'B_iter', note: `${note}, inbox.read pages of 10,000, JSON replies (scripts, --json, the faces)` },
      { name: 'T4.fill', value: perSecond(count, fillMs), unit: 'msg/s', better: 'higher', baseline: 'B_batch', note: `local sends src -> dst, ${WINDOW} in flight, durability batch` }
    ]
    const cpuNote = (what: string): string => `CPU time per entry during ${what} (user + system; steadier than entries/s on a loaded machine)`
    if (follow.daemon !== undefined) figures.push({ name: 'T4.cpu.daemon', value: follow.daemon, unit: 'us/entry', better: 'lower', note: cpuNote('T4, the daemon') })
    if (follow.main !== undefined) figures.push({ name: 'T4.cpu.daemon.main', value: follow.main, unit: 'us/entry', better: 'lower', note: cpuNote('T4, the daemon\'s main (JavaScript) thread alone: without LevelDB\'s compactions, which the replay\'s reads may start, and V8\'s helper threads') })
    figures.push({ name: 'T4.cpu.client', value: follow.client, unit: 'us/entry', better: 'lower', note: cpuNote('T4, the consumer (control client)') })
    if (ndjson.daemon !== undefined) figures.push({ name: 'T4.ndjson.cpu.daemon', value: ndjson.daemon, unit: 'us/entry', better: 'lower', note: cpuNote('T4.ndjson, the daemon') })
    figures.push({ name: 'T4.ndjson.cpu.client', value: ndjson.client, unit: 'us/entry', better: 'lower', note: cpuNote('T4.ndjson, the consumer') })
    if (read.daemon !== undefined) figures.push({ name: 'T4.read.cpu.daemon', value: read.daemon, unit: 'us/entry', better: 'lower', note: cpuNote('T4.read, the daemon') })
    if (read.main !== undefined) figures.push({ name: 'T4.read.cpu.daemon.main', value: read.main, unit: 'us/entry', better: 'lower', note: cpuNote('T4.read, the daemon\'s main thread alone') })
    figures.push({ name: 'T4.read.cpu.client', value: read.client, unit: 'us/entry', better: 'lower', note: cpuNote('T4.read, the consumer') })
    if (readJson.daemon !== undefined) figures.push({ name: 'T4.read.json.cpu.daemon', value: readJson.daemon, unit: 'us/entry', better: 'lower', note: cpuNote('T4.read.json, the daemon') })
    figures.push({ name: 'T4.read.json.cpu.client', value: readJson.client, unit: 'us/entry', better: 'lower', note: cpuNote('T4.read.json, the consumer') })
    if (held !== undefined) figures.push({ name: 'T6.inbox', value: held / 2 ** 20, unit: 'MiB', better: 'lower', max: 200, note: `RSS of the host holding ${count} unacked packets in one inbox` })
    return figures
  } finally {
    await d.stop()
  }
}

export const t4: Measurement = {
  name: 'T4',
  description: 'replay: a consumer reads 100,000 stored packets, entries/s',
  baselines: ['B_iter', 'B_batch'],
  run
}
