// N simulated hosts in one process, bootstrapped into a sparse graph: host
// i > 0 knows only host floor((i - 1) / 2) (the T7 binary tree: at most 3
// direct peers to begin with). Formation is timed until every host's DHT
// routing table is healthy.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SingleKadDHT } from '@libp2p/kad-dht'
import type { Libp2p } from '@libp2p/interface'
import type { RunningHost } from '../../src/host/components.js'
import type { DiscoveryOptions } from '../../src/discovery/discovery.js'
import { SimHost } from './host.js'

export function parentOf (i: number): number { return Math.floor((i - 1) / 2) }

/**
 * A routing table is healthy with about one peer per populated Kademlia
 * bucket: ceil(log2 N) + 1 peers (every other host in a net of a few), enough
 * for a lookup to converge from any host.
 */
export function healthyTable (n: number): number { return Math.min(n - 1, Math.ceil(Math.log2(Math.max(2, n))) + 1) }

/** Hosts started at once while the net grows. */
const START_CONCURRENCY = 16

export interface NetOptions {
  latency: number
  logs?: boolean
  discovery?: DiscoveryOptions
}

export function dhtOf (h: RunningHost): SingleKadDHT {
  return (h.libp2p as Libp2p<{ dht: SingleKadDHT }>).services.dht
}

export function sleep (ms: number): Promise<void> { return new Promise((resolve) => setTimeout(resolve, ms)) }

export class SimNet {
  readonly hosts: SimHost[] = []
  readonly root = mkdtempSync(join(tmpdir(), 'amesh-sim-'))
  constructor (private readonly opts: NetOptions) {}

  get size (): number { return this.hosts.length }

  /** Add hosts until there are `n`, a tree level at a time (each parent runs before its children start). */
  async grow (n: number): Promise<void> {
    while (this.hosts.length < n) {
      const start = this.hosts.length
      const end = start === 0 ? 1 : Math.min(n, 2 * start + 1)
      for (let from = start; from < end; from += START_CONCURRENCY) {
        const batch: SimHost[] = []
        for (let i = from; i < Math.min(end, from + START_CONCURRENCY); i++) {
          const peers = i === 0 ? [] : [this.hosts[parentOf(i)].addr]
          batch.push(new SimHost({ index: i, peers, latency: this.opts.latency, root: this.root, logs: this.opts.logs, discovery: this.opts.discovery }))
        }
        await Promise.all(batch.map(async (h) => await h.start()))
        this.hosts.push(...batch)
      }
    }
  }

  /** Routing-table sizes of the running hosts. */
  tableSizes (): number[] {
    return this.hosts.filter((h) => h.host !== undefined).map((h) => dhtOf(h.running).routingTable.size)
  }

  healthyAt (): number { return healthyTable(this.size) }

  /** Wait until every running host's routing table holds healthyAt() peers; false at the deadline. */
  async waitHealthy (timeoutMs: number, pollMs = 500): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    const want = this.healthyAt()
    while (Date.now() < deadline) {
      if (this.tableSizes().every((s) => s >= want)) return true
      await sleep(pollMs)
    }
    return false
  }

  /** Wait until every host knows its parent's card and the parent knows the child's (the bootstrap card exchange). */
  async waitJoined (timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs
    const missing = (): number[] => this.hosts.slice(1).filter((h) => {
      const p = this.hosts[parentOf(h.index)]
      return !knowsName(h, p.name) || !knowsName(p, h.name)
    }).map((h) => h.index)
    let left = missing()
    while (left.length > 0 && Date.now() < deadline) {
      await sleep(250)
      left = missing()
    }
    return left.length
  }

  async stop (): Promise<void> {
    for (let k = 0; k < this.hosts.length; k += START_CONCURRENCY * 4) {
      await Promise.all(this.hosts.slice(k, k + START_CONCURRENCY * 4).map(async (h) => await h.destroy().catch(() => {})))
    }
    rmSync(this.root, { recursive: true, force: true })
  }
}

/** Whether a host's directory holds a card of a node named `name`. */
export function knowsName (h: SimHost, name: string): boolean {
  if (h.host === undefined) return false
  try { return h.running.directory.byNameUnique(name) !== undefined } catch { return true }
}
