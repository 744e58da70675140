// A sparse mesh of hosts for T7/T8: host i > 0 is bootstrapped to host
// floor((i - 1) / 2) only (a binary tree: each host has at most 3 direct
// peers to begin with). Host i serves node n<i>.
import { Daemon, startMany, stopAll } from '../lib/daemon.js'
import { nowMs } from '../lib/stats.js'
import { cpuSeconds } from '../lib/quiet.js'
import type { BenchContext } from '../lib/types.js'

/** how long a new host may take to exchange cards with its parent (a loaded machine is slow) */
const JOIN_TIMEOUT = 90_000
/** after this long without the parent's card, a host joins its parent again */
const REJOIN_AFTER = 30_000

export function nodeName (i: number): string { return `n${i}` }

export function parentOf (i: number): number { return Math.floor((i - 1) / 2) }

export class Mesh {
  readonly hosts: Daemon[] = []
  constructor (private readonly ctx: BenchContext, private readonly label: string) {}

  get size (): number { return this.hosts.length }

  /** Add hosts until there are `n`, each with its node, each knowing its parent's node. */
  async grow (n: number): Promise<void> {
    const from = this.hosts.length
    if (n <= from) return
    // start a level of the tree at a time so each parent exists first
    while (this.hosts.length < n) {
      const start = this.hosts.length
      const end = start === 0 ? 1 : Math.min(n, 2 * start + 1)
      const labels = Array.from({ length: end - start }, (_, k) => `${this.label}-${start + k}`)
      const started = await startMany(this.ctx, labels, (k) => {
        const i = start + k
        return i === 0 ? {} : { peers: [this.hosts[parentOf(i)].addr] }
      }, 4)
      this.hosts.push(...started)
      await Promise.all(started.map(async (d, k) => { await d.ensureNode(nodeName(start + k)) }))
    }
    const missing: string[] = []
    await Promise.all(this.hosts.slice(Math.max(1, from)).map(async (d, k) => {
      const i = Math.max(1, from) + k
      if (!await this.joined(i)) missing.push(`n${i} and its parent n${parentOf(i)}`)
    }))
    if (this.rejoined.length > 0) this.ctx.log(`re-joined by hand (the bootstrap dial or card exchange had failed): ${this.rejoined.join(', ')}`)
    if (missing.length > 0) throw new Error(`not joined within ${JOIN_TIMEOUT} ms: ${missing.join(', ')}`)
  }

  /** CPU the hosts used together over `ms` (in % of one core), per host: the costliest first. */
  async cpuOver (ms: number): Promise<{ total: number, perHost: number[] }> {
    const cpu = async (pid: number): Promise<number> => (await cpuSeconds(pid)) ?? 0
    const before = await Promise.all(this.hosts.map(async (d) => await cpu(d.pid)))
    const t0 = nowMs()
    await new Promise((resolve) => setTimeout(resolve, ms))
    const after = await Promise.all(this.hosts.map(async (d) => await cpu(d.pid)))
    const seconds = (nowMs() - t0) / 1000
    // CPU seconds per second, in % of one core
    const perHost = after.map((a, i) => 100 * (a - before[i]) / seconds)
    return { total: perHost.reduce((a, b) => a + b, 0), perHost: [...perHost].sort((a, b) => b - a) }
  }

  /** Hosts the mesh had to join to their parent by hand (`join`), as an operator would. */
  readonly rejoined: string[] = []

  /**
   * Host i and its parent know each other's node. On a loaded machine the
   * bootstrap dial or the card exchange can fail every retry: after
   * REJOIN_AFTER the host joins its parent again (`amesh join`), once.
   */
  private async joined (i: number): Promise<boolean> {
    const d = this.hosts[i]
    const parent = this.hosts[parentOf(i)]
    const knows = async (timeout: number): Promise<boolean> => {
      try {
        await d.waitKnows(nodeName(parentOf(i)), timeout)
        await parent.waitKnows(nodeName(i), timeout)
        return true
      } catch {
        return false
      }
    }
    if (await knows(REJOIN_AFTER)) return true
    this.rejoined.push(nodeName(i))
    await d.control.call('join', { addr: parent.addr }).catch(() => undefined)
    return await knows(JOIN_TIMEOUT - REJOIN_AFTER)
  }

  async stop (): Promise<void> {
    await stopAll(this.hosts)
  }
}
