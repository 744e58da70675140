// T7: N hosts (separate processes) in a sparse graph (see mesh.ts); every
// host sends one packet to the node of every other host, by name. Before each
// send the sender resolves the name (`card` on the control socket: local,
// known cards, a card exchange with connected hosts, then the DHT when the
// daemon has one installed) and that resolution is timed as the lookup.
// Delivered = packets durable in the target inboxes (status inbox.last).
// Before the sends, with the mesh formed, the hosts' idle CPU is sampled.
// The target's host grants the sender before each send and the send waits
// until the grant is held on the sender's host (the grant travels host to
// host); a send still refused with NO_GRANT is retried for a bounded time and
// counted, and anything not delivered is reported.
import { waitFor } from '../lib/cli.js'
import { nowMs, p50, p99 } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'
import type { Daemon } from '../lib/daemon.js'
import { Mesh, nodeName } from './mesh.js'
import { waitQuiet } from '../lib/quiet.js'

/** a settled mesh: under 2 % of one core per host on average */
const SETTLED_CPU_PER_HOST = 0.02

/** How long the formed, idle mesh is watched for CPU use before the sends. */
const IDLE_SAMPLE = 10_000

interface Outcome { lookups: number[], failures: Map<string, number>, sendFailures: Map<string, number>, sent: number[], retried: number }

/** How long a send waits for its grant to be held on the sender's host, and retries a NO_GRANT refusal. */
const GRANT_WAIT = 30_000

interface HeldGrant { audience: string, subject_id: string }

/** Wait until the sender's host holds a grant from `targetId` to node `as` (false when it never came). */
async function grantHeld (d: Daemon, as: string, targetId: string): Promise<boolean> {
  try {
    await waitFor(async () => {
      const r = await d.control.request<{ held: HeldGrant[] }>('grants', {})
      return r.held.some((g) => g.audience === as && g.subject_id === targetId) ? true : undefined
    }, GRANT_WAIT, 100)
    return true
  } catch {
    return false
  }
}

function isNoGrant (err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NO_GRANT')
}

/** Send, retrying a NO_GRANT refusal (a grant still on its way) for at most GRANT_WAIT; returns how many retries it took. */
async function sendWithGrantRetry (d: Daemon, params: { as: string, to: string, text: string }): Promise<number> {
  const deadline = nowMs() + GRANT_WAIT
  for (let retries = 0; ; retries++) {
    try {
      await d.control.call('send', params)
      return retries
    } catch (err) {
      if (!isNoGrant(err) || nowMs() > deadline) throw err
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

function bump (m: Map<string, number>, err: unknown): void {
  const reason = (err instanceof Error ? err.message : String(err)).split('(')[0].trim()
  m.set(reason, (m.get(reason) ?? 0) + 1)
}

async function allToAll (mesh: Mesh): Promise<Outcome> {
  const n = mesh.size
  const lookups: number[] = []
  const failures = new Map<string, number>()
  const sendFailures = new Map<string, number>()
  const sent = new Array<number>(n).fill(0)
  let retried = 0
  await Promise.all(mesh.hosts.map(async (d, i) => {
    for (let k = 1; k < n; k++) {
      const j = (i + k) % n
      const t0 = nowMs()
      let targetId: string
      try {
        const card = await d.control.request<{ capabilities: { extensions: Array<{ params?: { nodeId?: string } }> } }>('card', { target: nodeName(j) })
        lookups.push(nowMs() - t0)
        targetId = card.capabilities.extensions.find((e) => e.params?.nodeId !== undefined)?.params?.nodeId ?? ''
      } catch (err) {
        bump(failures, err)
        continue
      }
      try {
        // the access matrix: the target grants the sender (not part of the lookup time)
        await mesh.hosts[j].grant(nodeName(j), nodeName(i))
        if (!await grantHeld(d, nodeName(i), targetId)) bump(sendFailures, new Error('grant not held by the sender\'s host within 30 s (sent anyway)'))
        retried += await sendWithGrantRetry(d, { as: nodeName(i), to: nodeName(j), text: `hello n${j} from n${i}` })
        sent[j]++
      } catch (err) {
        bump(sendFailures, err)
      }
    }
  }))
  return { lookups, failures, sendFailures, sent, retried }
}

async function delivered (mesh: Mesh, sent: number[], timeoutMs: number): Promise<number> {
  const count = async (): Promise<number[]> => await Promise.all(mesh.hosts.map(async (d, j) => await d.inboxLast(nodeName(j))))
  try {
    await waitFor(async () => (await count()).every((v, j) => v >= sent[j]) ? true : undefined, timeoutMs, 200)
  } catch { /* report what arrived */ }
  return (await count()).reduce((a, b) => a + b, 0)
}

async function run (ctx: BenchContext): Promise<Figure[]> {
  const n = ctx.count(30, 4)
  const mesh = new Mesh(ctx, 't7')
  try {
    const t0 = nowMs()
    const expected0 = n * (n - 1)
    try {
      await mesh.grow(n)
    } catch (err) {
      const note = `the ${n}-host mesh did not form (${mesh.size} hosts up): ${err instanceof Error ? err.message : String(err)}`
      ctx.log(note)
      return [{ name: 'T7.delivered', value: 0, unit: 'packets', better: 'higher', min: expected0, note }]
    }
    ctx.log(`${n} hosts up and joined in ${Math.round(nowMs() - t0)} ms`)
    const sampleMs = ctx.count(IDLE_SAMPLE, 2000)
    const idle = await mesh.cpuOver(sampleMs)
    const idleNote = `${n} hosts idle after the mesh formed, over ${sampleMs / 1000} s; busiest hosts ${idle.perHost.slice(0, 3).map((v) => v.toFixed(1)).join(', ')} %`
    ctx.log(`idle CPU: ${idle.total.toFixed(1)} % of one core (${idleNote})`)
    // lookups are measured in the formed mesh, not during its start-up churn
    // (handshakes, DHT routing, card publishing): wait until it is quiet
    const settle = await waitQuiet(mesh.hosts.map((d) => d.pid), { maxCpu: SETTLED_CPU_PER_HOST * n, windowMs: 2000, timeoutMs: 120_000 })
    const settleNote = `${n} hosts ${settle.quiet ? 'quiet' : 'still busy'} ${Math.round(settle.waitedMs)} ms after the idle sample (${(settle.cpu * 100).toFixed(0)} % of one core together over 2 s)`
    ctx.log(settleNote)
    const out = await allToAll(mesh)
    const expected = n * (n - 1)
    const got = await delivered(mesh, out.sent, 60_000)
    const why = [...out.failures].map(([r, c]) => `${c} x ${r}`).join('; ')
    const sendWhy = [...out.sendFailures].map(([r, c]) => `${c} x ${r}`).join('; ')
    const sentTotal = out.sent.reduce((a, b) => a + b, 0)
    const note = `${n} hosts, binary-tree bootstrap, ${expected} sends by name, ${sentTotal} accepted, ${got} delivered` +
      (why === '' ? '' : `; unresolved: ${why}`) + (sendWhy === '' ? '' : `; send refused: ${sendWhy}`) +
      (out.retried === 0 ? '' : `; ${out.retried} NO_GRANT retries while grants travelled`)
    ctx.log(note)
    const figures: Figure[] = [
      { name: 'T7.delivered', value: got, unit: 'packets', better: 'higher', min: expected, note },
      { name: 'T7.unresolved', value: expected - out.lookups.length, unit: 'names', better: 'lower', max: 0, note },
      { name: 'T7.idle.cpu', value: idle.total, unit: '% of one core', better: 'lower', note: idleNote },
      { name: 'T7.settle', value: settle.waitedMs, unit: 'ms', better: 'lower', note: settleNote }
    ]
    if (out.lookups.length > 0) {
      figures.push(
        { name: 'T7.lookup.p50', value: p50(out.lookups), unit: 'ms', better: 'lower', max: 150, note: `${out.lookups.length} resolved lookups` },
        { name: 'T7.lookup.p99', value: p99(out.lookups), unit: 'ms', better: 'lower', max: 500, note: `${out.lookups.length} resolved lookups` }
      )
    }
    return figures
  } finally {
    await mesh.stop()
  }
}

export const t7: Measurement = {
  name: 'T7',
  description: 'scale: 30 hosts in a sparse graph, every host sends to every other by name (DHT)',
  run
}
