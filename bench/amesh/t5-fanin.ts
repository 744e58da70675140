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

const WARM = 50

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

async function run (ctx: BenchContext): Promise<Figure[]> {
  const senders = ctx.count(10, 3)
  const perSender = ctx.count(3000, 500)
  const rx = await Daemon.start(ctx, 't5-rx')
  const all: Daemon[] = [rx]
  try {
    await rx.ensureNode(RX)
    const tx = await startMany(ctx, Array.from({ length: senders }, (_, i) => `t5-s${i}`), () => ({ peers: [rx.addr] }))
    all.push(...tx)
    await Promise.all(tx.map(async (d, i) => { await d.ensureNode(`s${i}`); await d.waitKnows(RX) }))
    for (let i = 0; i < senders; i++) await rx.grant(RX, `s${i}`)
    await Promise.all(tx.map(async (_, i) => { await rx.waitKnows(`s${i}`) }))
    // warm-up: each link up and each sender's card checked once
    await Promise.all(tx.map(async (d, i) => { await sendMany(d.control, `s${i}`, RX, WARM, 512, 16) }))
    const base = senders * WARM
    await waitInbox(rx, RX, base)
    // the hosts just met (handshakes, identify, DHT routing, card publishing): measure the steady state
    const q = await waitQuiet(all.map((d) => d.pid), { maxCpu: 0.03 * all.length, timeoutMs: 60_000 })
    ctx.log(`${all.length} hosts ${q.quiet ? 'quiet' : 'still busy'} after ${Math.round(q.waitedMs)} ms (${(q.cpu * 100).toFixed(0)} % of one CPU together)`)
    const cpu = await startCpu([{ label: 'receiver', pid: rx.pid }, ...tx.map((d, i) => ({ label: `s${i}`, pid: d.pid }))])
    const t0 = nowMs()
    await Promise.all(tx.map(async (d, i) => { await sendMany(d.control, `s${i}`, RX, perSender, 512, WINDOW) }))
    const t1 = await waitInbox(rx, RX, base + senders * perSender)
    const total = senders * perSender
    const used = sendersSummed(await cpu(total))
    const last = await rx.inboxLast(RX)
    if (last !== base + total) throw new Error(`receiver holds ${last - base} of ${total}`)
    const rate = perSecond(total, t1 - t0)
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
  run
}
