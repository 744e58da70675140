// A sparse mesh of hosts for T7/T8: host i > 0 is bootstrapped to host
// floor((i - 1) / 2) only (a binary tree: each host has at most 3 direct
// peers to begin with). Host i serves node n<i>.
import { Daemon, startMany, stopAll } from '../lib/daemon.js'
import type { BenchContext } from '../lib/types.js'

/** how long a new host may take to exchange cards with its parent (a loaded machine is slow) */
const JOIN_TIMEOUT = 90_000

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
    await Promise.all(this.hosts.slice(Math.max(1, from)).map(async (d, k) => {
      const i = Math.max(1, from) + k
      await d.waitKnows(nodeName(parentOf(i)), JOIN_TIMEOUT)
      await this.hosts[parentOf(i)].waitKnows(nodeName(i), JOIN_TIMEOUT)
    }))
  }

  async stop (): Promise<void> {
    await stopAll(this.hosts)
  }
}
