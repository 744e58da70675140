// One simulated amesh host: the real composition root (src/host/components.ts)
// with every real service (discovery with the DHT records and validators,
// card exchange, gossip, ACL with grants, delivery with packets and acks,
// receipts), composed with two things swapped: libp2p's in-memory transport
// (@libp2p/memory, optional latency per message: latency.ts) instead of TCP,
// and an in-memory abstract-level store (memory-level) instead of LevelDB on
// disk; and two libp2p timeouts set for a shared event loop (below). The
// host key and the pid file still live in a home directory of its own.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { latentMemory } from './latency.js'
import { MemoryLevel } from 'memory-level'
import { defaultConfig, type HostConfig } from '../../src/host/config.js'
import { startHost, type RunningHost } from '../../src/host/components.js'
import { CONNECTION_PING_INTERVAL } from '../../src/host/libp2p.js'
import type { DiscoveryOptions } from '../../src/discovery/discovery.js'
import type { RawDb } from '../../src/store/db.js'

/**
 * libp2p's connection monitor in the simulation: the host's ping interval
 * (src/host/libp2p.ts), but a failed ping does not drop the connection. All
 * simulated hosts share one event loop, which a loaded machine delays by
 * seconds (at 30 hosts under load average 9-10: p50 0.4-13 s, p99 3.5-19 s),
 * so pings time out on both ends (the pinger's adaptive timeout, at least
 * 5 s; the answering ping service's 10 s, which resets the stream): the
 * monitor dropped 285-302 of the ~800 connections of an idle 30-host net in
 * 30 s, and each re-dial re-ran Noise, identify and card exchange. A real
 * host has its own event loop, and a stopped simulated host closes its
 * connections itself; this is the one setting in which a simulated host
 * differs from a real one.
 */
export const SIM_CONNECTION_MONITOR = { pingInterval: CONNECTION_PING_INTERVAL, abortConnectionOnPingFailure: false }

/**
 * kad-dht pings every new contact before it enters the routing table, and
 * old ones before they are evicted, with an adaptive timeout of at least 5 s;
 * a contact whose ping timed out is left out until it connects again. On the
 * simulation's shared, delayed event loop those pings time out: at 100 hosts
 * and 10 ms per message the routing tables stayed at p50 1, min 0 peers after
 * 218 s of formation. The simulation waits up to 60 s (a setting in which it
 * differs from a real host, as above). A peer that connects is added under a
 * bound of its own (kad-dht's onPeerConnectTimeout, 10 s), which includes
 * that ping and its wait in the ping queue: with only the ping timeouts
 * raised, a 100-host formation at 10 ms per message on a loaded machine
 * ended with routing tables of p50 0 peers after 385 s. It waits 120 s here.
 */
export const SIM_DHT_PINGS = { pingNewContactTimeout: { minTimeout: 60_000, maxTimeout: 120_000 }, pingOldContactTimeout: { minTimeout: 60_000, maxTimeout: 120_000 }, onPeerConnectTimeout: 120_000 }

export function nodeName (i: number): string { return `n${i}` }

export function memoryAddr (i: number): string { return `/memory/sim-${i}` }

export interface SimHostOptions {
  index: number
  /** bootstrap addresses (with /p2p/) */
  peers: string[]
  /** ms each message takes on this host's links, per direction (0: none) */
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
      connectionMonitor: SIM_CONNECTION_MONITOR,
      dhtPings: SIM_DHT_PINGS,
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
