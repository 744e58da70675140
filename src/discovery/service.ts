// The discovery service of one host, built from the components it names:
// DHT announcement and lookup, gossip of card updates, card expiry (the
// engine in discovery.ts) and the remembered SSH joins (tunnels.ts). The
// composition root wires `lookup` into resolution and `announce` into node
// creation; nothing here is installed on a shared object.

import type { Libp2p } from '@libp2p/interface'
import type { Committer, RawDb } from '../store/db.js'
import { errorMessage } from '../util/errors.js'
import type { Startable } from '../util/startable.js'
import type { VerifiedCard } from './card.js'
import type { DhtRecords } from './dht-records.js'
import { Discovery, type DiscoveryEngineComponents, type DiscoveryOptions } from './discovery.js'
import { SshJoins } from './tunnels.js'

export interface DiscoveryComponents extends DiscoveryEngineComponents {
  /** the store the remembered SSH joins live in */
  db: RawDb
  committer: Committer
}

/** Every field optional; defaults in discovery.ts. */
export type DiscoveryInit = DiscoveryOptions

export interface DiscoveryService extends Startable {
  /** The DHT step of resolution: true when the DHT knew the target (a name several remote nodes claim throws). */
  lookup: (target: string) => Promise<boolean>
  /** A local node appeared or changed: publish its card and claim now. */
  announce: () => void
  /** The valid cards the DHT alone holds for a name or node id, each learnt into the directory. */
  resolve: (target: string) => Promise<VerifiedCard[]>
  /** Publish every local node now; resolves when all went out. */
  publishAll: () => Promise<void>
  /** remembered, supervised SSH joins */
  readonly joins: SshJoins
  /** the DHT record reader and writer (its query count is for diagnostics and tests) */
  readonly records: DhtRecords
  /** DHT lookups this host ran (joined ones not counted) */
  readonly lookupsRun: number
}

class DiscoveryParts implements DiscoveryService {
  readonly joins: SshJoins
  private readonly engine: Discovery
  private readonly libp2p: Libp2p
  private started = false
  private readonly onLibp2pStop = (): void => { void this.stop() }

  constructor (private readonly components: DiscoveryComponents, init: DiscoveryInit) {
    this.libp2p = components.libp2p
    this.engine = new Discovery(components, init)
    this.joins = new SshJoins(components.db, components.committer, { libp2p: components.libp2p, log: components.log })
  }

  get records (): DhtRecords { return this.engine.records }
  get lookupsRun (): number { return this.engine.lookupsRun }

  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    // a host stopped without its composition root stopping services still ends them
    this.libp2p.addEventListener('stop', this.onLibp2pStop, { once: true })
    await this.engine.start()
    void this.joins.resume().catch((err) => this.components.log(`ssh joins: ${errorMessage(err)}`))
  }

  async stop (): Promise<void> {
    if (!this.started) return
    this.started = false
    this.libp2p.removeEventListener('stop', this.onLibp2pStop)
    this.engine.stop()
    this.joins.stop()
  }

  async lookup (target: string): Promise<boolean> { return await this.engine.lookup(target) }
  announce (): void { this.engine.announce() }
  async resolve (target: string): Promise<VerifiedCard[]> { return await this.engine.resolve(target) }
  async publishAll (): Promise<void> { await this.engine.publishAll() }
}

/** The discovery service over `components` (not started). */
export function createDiscovery (components: DiscoveryComponents, init: DiscoveryInit = {}): DiscoveryService {
  return new DiscoveryParts(components, init)
}
