// T5: N sending hosts -> one receiving host, aggregate durable packets/s.
// Every sender host has its own node s<i> and sends `count / N` 512 B
// packets to the receiver's node rx, all senders at once.
import { Daemon, sendMany, startMany, stopAll, waitInbox } from '../lib/daemon.js'
import { nowMs, perSecond } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import { RX } from './pair.js'
import { waitQuiet } from '../lib/quiet.js'
import { WINDOW } from './t2-throughput.js'
import { cpuFigures, startCpu, type CpuPerItem } from '../lib/cpu.js'
import { FILL_FIRST_DELAY } from '../../src/discovery/table-filler.js'

/** first-contact sends per sender (links up, cards checked), before the hosts are left to settle */
const WARM = 50
/** after the table fillers' first walk is due, how long it is given before the quiet check, ms */
const FILL_SETTLE_MS = 3000
/** the receiver's node that takes the warm-up (its own inbox: RX holds only the counted packets, and neither nears the inbox cap) */
export const WARM_NODE = 'rx-warm'

/**
 * Warm-up sends per sender right before the burst. A daemon's JIT keeps compiling its hot paths
 * (TurboFan jobs on V8's worker threads) through its first ~20,000 sends: in T2's counted burst
 * ~30 % of the sender's CPU in its first 0.5 s, ~8 % 2 s later (perf, docs/PERFORMANCE.md session 12).
 * With T2's warm-up (2,000) compile was 23-50 % of the ten T5 senders' CPU all through the burst;
 * after 8,000 each, 13-36 %. More would run the receiver's inbox for the warm-up past its cap.
 */
export function t5Warm (ctx: BenchContext): number { return ctx.count(8000, 200) }

async function sleepMs (ms: number): Promise<void> {
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
}

/** The sender hosts' CPU as one subject (`senders`, their sum) beside the receiver's. */
function sendersSummed (cpu: CpuPerItem): CpuPerItem {
  const sum = (r: Record<string, number | undefined>): number | undefined => {
    const tx = Object.entries(r).filter(([label]) => label !== 'receiver').map(([, v]) => v)
    return tx.some((v) => v === undefined) ? undefined : tx.reduce<number>((a, v) => a + (v ?? 0), 0)
  }
  return {
    client: cpu.client,
    subjects: { senders: sum(cpu.subjects), receiver: cpu.subjects.receiver },
    main: { senders: sum(cpu.main), receiver: cpu.main.receiver }
  }
}

interface Commits { batches: number, synced: number, ops: number }

/** Each host's store commits so far (`status`). */
async function commitsOf (hosts: Daemon[]): Promise<Commits[]> {
  return await Promise.all(hosts.map(async (d) => (await d.control.call('status')).commits as Commits))
}

/** Synced batches and ops per 1,000 packets over the burst: the senders summed, and the receiver. */
function commitNote (before: Commits[], after: Commits[], packets: number): string {
  const per = (i: number, k: keyof Commits): number => (after[i][k] - before[i][k]) * 1000 / packets
  let synced = 0
  let ops = 0
  for (let i = 1; i < after.length; i++) { synced += per(i, 'synced'); ops += per(i, 'ops') }
  return `per 1,000 packets: senders' synced batches ${synced.toFixed(0)}, ops ${ops.toFixed(0)}; receiver's synced batches ${per(0, 'synced').toFixed(0)}, ops ${per(0, 'ops').toFixed(0)}`
}

/**
 * A tool's look at the burst (bench/tools/t5-threads.ts): called with the receiver's and
 * the senders' pids right before the burst, and readings of how far the burst got; what it returns is called with the packet count after it.
 */
export type BurstProbe = (receiver: number, senders: number[], progress: BurstProgress) => Promise<(packets: number) => Promise<void>>

/** How far the burst got: the sends answered (durable in the senders' outboxes), the packets the receiver holds. */
export interface BurstProgress { accepted: () => number, delivered: () => Promise<number> }

/** A tool's variant of T5 (the bench runs the defaults). */
export interface FanInOptions {
  /** sender hosts (default 10, --quick 3) */
  senders?: number
  /** packets each sender sends in the burst (default 3,000, --quick 500) */
  perSender?: number
  /** warm-up packets per sender right before the burst, to WARM_NODE (default t5Warm) */
  warm?: number
}

/** T5's fan-in, optionally with a probe around the burst. */
export async function fanIn (ctx: BenchContext, probe?: BurstProbe, opts: FanInOptions = {}): Promise<Figure[]> {
  const senders = opts.senders ?? ctx.count(10, 3)
  const perSender = opts.perSender ?? ctx.count(3000, 500)
  const warm = opts.warm ?? t5Warm(ctx)
  const rx = await Daemon.start(ctx, 't5-rx')
  const all: Daemon[] = [rx]
  try {
    await rx.ensureNode(RX)
    await rx.ensureNode(WARM_NODE)
    const tx = await startMany(ctx, Array.from({ length: senders }, (_, i) => `t5-s${i}`), () => ({ peers: [rx.addr] }))
    all.push(...tx)
    const started = nowMs()
    await Promise.all(tx.map(async (d, i) => { await d.ensureNode(`s${i}`); await d.waitKnows(RX); await d.waitKnows(WARM_NODE) }))
    for (let i = 0; i < senders; i++) { await rx.grant(RX, `s${i}`); await rx.grant(WARM_NODE, `s${i}`) }
    await Promise.all(tx.map(async (_, i) => { await rx.waitKnows(`s${i}`) }))
    // first contact: each link up and each sender's card checked once
    await Promise.all(tx.map(async (d, i) => { await sendMany(d.control, `s${i}`, RX, WARM, 512, 16) }))
    await waitInbox(rx, RX, senders * WARM)
    // the hosts just met (handshakes, identify, DHT routing, card publishing): measure the steady state.
    // Each host's routing-table filler makes its first DHT walk FILL_FIRST_DELAY after its start; on 11
    // hosts that walk landed in the burst (kad-dht and peer-store ~14 % of a sender's busy time in it)
    await sleepMs(started + FILL_FIRST_DELAY + FILL_SETTLE_MS - nowMs())
    const q = await waitQuiet(all.map((d) => d.pid), { maxCpu: 0.03 * all.length, timeoutMs: 60_000 })
    ctx.log(`${all.length} hosts ${q.quiet ? 'quiet' : 'still busy'} ${Math.round(nowMs() - started)} ms after the senders started (quiet check ${Math.round(q.waitedMs)} ms) (${(q.cpu * 100).toFixed(0)} % of one CPU together)`)
    // warm-up right before the burst, to the receiver's other node (its packets are not counted): a daemon's
    // first thousands of sends cost it more than the later ones (JIT tier-up, young-generation growth;
    // docs/PERFORMANCE.md sessions 10 and 12), and with only 3,000 each the burst ran in that start-up
    await Promise.all(tx.map(async (d, i) => { await sendMany(d.control, `s${i}`, WARM_NODE, warm, 512, WINDOW) }))
    await waitInbox(rx, WARM_NODE, senders * warm)
    const base = senders * WARM
    await waitInbox(rx, RX, base)
    let accepted = 0
    const delivered = async (): Promise<number> => await rx.inboxLast(RX) - base
    const hooks = probe === undefined ? {} : { onReply: () => { accepted++ } }
    const probed = await probe?.(rx.pid, tx.map((d) => d.pid), { accepted: () => accepted, delivered })
    // counted from here (a probe's own waits stay outside)
    const commits = await commitsOf(all)
    const cpu = await startCpu([{ label: 'receiver', pid: rx.pid }, ...tx.map((d, i) => ({ label: `s${i}`, pid: d.pid }))])
    const t0 = nowMs()
    await Promise.all(tx.map(async (d, i) => { await sendMany(d.control, `s${i}`, RX, perSender, 512, WINDOW, hooks) }))
    const t1 = await waitInbox(rx, RX, base + senders * perSender)
    const total = senders * perSender
    const used = sendersSummed(await cpu(total))
    await probed?.(total)
    const last = await rx.inboxLast(RX)
    if (last !== base + total) throw new Error(`receiver holds ${last - base} of ${total}`)
    const rate = perSecond(total, t1 - t0)
    ctx.log(`T5 commits ${commitNote(commits, await commitsOf(all), total)}`)
    return [
      { name: 'T5', value: rate, unit: 'msg/s', better: 'higher', baseline: 'T2', minRatio: 0.9, note: `${senders} sender hosts x ${perSender} x 512 B -> 1 receiver` },
      { name: 'T5.vsStream', value: rate, unit: 'msg/s', better: 'higher', baseline: 'B_stream.512B', note: 'same figure against the raw stream' },
      // per packet: the sender hosts summed (each packet is sent by one of them), the receiver, the bench client
      ...cpuFigures('T5', used, 'packet', 'T5')
    ]
  } finally {
    await stopAll(all)
  }
}

export const t5: Measurement = {
  name: 'T5',
  description: 'fan-in: 10 sending hosts -> one receiver, aggregate packets/s',
  baselines: ['T2'],
  run: async (ctx) => await fanIn(ctx)
}
