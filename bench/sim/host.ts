// One simulated amesh host: the real composition root (src/host/components.ts)
// with every real service (discovery with the DHT records and validators,
// card exchange, gossip, ACL with grants, delivery with packets and acks,
// receipts), composed with two things swapped: libp2p's in-memory transport
// (@libp2p/memory, optional latency per buffer) instead of TCP, and an
// in-memory abstract-level store (memory-level) instead of LevelDB on disk.
// The host key and the pid file still live in a home directory of its own.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { latentMemory } from './latency.js'
import { MemoryLevel } from 'memory-level'
import { defaultConfig, type HostConfig } from '../../src/host/config.js'
import { startHost, type RunningHost } from '../../src/host/components.js'
import type { DiscoveryOptions } from '../../src/discovery/discovery.js'
import type { RawDb } from '../../src/store/db.js'

export function nodeName (i: number): string { return `n${i}` }

export function memoryAddr (i: number): string { return `/memory/sim-${i}` }

export interface SimHostOptions {
  index: number
  /** bootstrap addresses (with /p2p/) */
  peers: string[]
  /** ms added to every buffer on this host's inbound links (0: none) */
  latency: number
  /** directory under which the host's home is made */
  root: string
  /** log lines into the home (default: dropped, to /dev/null) */
  logs?: boolean
  discovery?: DiscoveryOptions
}

/** A host of the simulation: it can stop, and start again with its store (same node ids) or without (new ones). */
export class SimHost {
  host?: RunningHost
  private db?: MemoryLevel<string, Uint8Array>
  readonly home: string
  readonly index: number

  constructor (private readonly opts: SimHostOptions) {
    this.index = opts.index
    this.home = mkdtempSync(join(opts.root, `h${opts.index}-`))
  }

  get name (): string { return nodeName(this.index) }

  get running (): RunningHost {
    if (this.host === undefined) throw new Error(`host ${this.index} is not running`)
    return this.host
  }

  /** This host's address, with its peer id. */
  get addr (): string { return `${memoryAddr(this.index)}/p2p/${this.running.libp2p.peerId.toString()}` }

  /** Start (again): `keepStore` false starts from an empty store (a host that lost its disk). */
  async start (peers: string[] = this.opts.peers, keepStore = true): Promise<RunningHost> {
    if (!keepStore || this.db === undefined) this.db = new MemoryLevel<string, Uint8Array>({ keyEncoding: 'utf8', valueEncoding: 'view' })
    const db = this.db
    const config: HostConfig = { ...defaultConfig(), listen: [memoryAddr(this.index)], peers, mdns: false, durability: 'none' }
    this.host = await startHost({
      home: this.home,
      config,
      logFile: this.opts.logs === true ? join(this.home, 'amesh.log') : '/dev/null',
      discovery: this.opts.discovery ?? {},
      transports: [latentMemory(this.opts.latency)],
      openLevel: async (path) => {
        mkdirSync(path, { recursive: true }) // the store guard measures the free space of its directory
        await db.open()
        return db as unknown as RawDb
      },
      onStoreFatal: (err) => { throw err }
    })
    await this.host.registry.ensure(this.name)
    return this.host
  }

  async stop (): Promise<void> {
    const h = this.host
    this.host = undefined
    if (h !== undefined) await h.stop()
  }

  /** Stop and remove the home. */
  async destroy (): Promise<void> {
    await this.stop()
    rmSync(this.home, { recursive: true, force: true })
  }
}
