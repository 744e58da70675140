import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { Libp2p } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import { CardExchange } from '../discovery/cards-protocol.js'
import { Directory } from '../discovery/directory.js'
import { DeliveryService } from '../delivery/service.js'
import { Committer, batchTarget, openDb, type RawDb } from '../store/db.js'
import { InboxStore } from '../store/inbox.js'
import { ConsumptionStore } from '../store/consumption.js'
import { ReceiptService } from '../delivery/receipt-service.js'
import { NodeStore } from '../store/nodes.js'
import { OutboxStore } from '../store/outbox.js'
import { StoreLockedError, errorMessage } from '../util/errors.js'
import { createLogger, type Logger } from '../util/log.js'
import type { HostConfig } from './config.js'
import { loadOrCreateHostKey } from './host-key.js'
import { buildLibp2p } from './libp2p.js'
import { LocalCards } from './local-cards.js'
import { homePaths, type HomePaths } from '../control/paths.js'
import { PeerBook } from './peer-book.js'
import { admitPacket } from '../authz/admit.js'
import { AclService } from '../authz/acl-service.js'
import type { Packet } from '../packet/types.js'
import type { LocalNode } from '../store/nodes.js'
import type { Target } from './resolve.js'
import { BootstrapKeeper } from './bootstrap-keeper.js'

const RETENTION_INTERVAL = 60_000

export interface HostOptions {
  home: string
  config: HostConfig
  /** log to this file instead of stderr */
  logFile?: string
}

/** One amesh host: the store, the libp2p peer, delivery and discovery, started and stopped in order. */
export class Host {
  readonly paths: HomePaths
  readonly config: HostConfig
  readonly log: Logger
  db!: RawDb
  committer!: Committer
  nodes!: NodeStore
  inbox!: InboxStore
  consumption!: ConsumptionStore
  receipts!: ReceiptService
  outbox!: OutboxStore
  directory!: Directory
  libp2p!: Libp2p
  cards!: LocalCards
  exchange!: CardExchange
  delivery!: DeliveryService
  peerBook!: PeerBook
  acl!: AclService
  readonly startedAt = Date.now()
  /** DHT lookup of a name or node id; set by the daemon when discovery runs */
  lookup?: (target: string) => Promise<boolean>
  /** announcing beyond the card exchange (discovery's publish); set by the daemon when discovery runs */
  onAnnounce?: () => void
  /** sender-side permission check, installed by the ACL layer; throws a denial */
  authorizeSend?: (packet: Packet, from: LocalNode, target: Target) => Promise<void>
  /** creates a node under a parent with its lineage certificate; installed by the ACL layer */
  createChild?: (name: string, parent?: string) => Promise<LocalNode>
  private retentionTimer?: NodeJS.Timeout
  private keeper!: BootstrapKeeper
  private stopping?: Promise<void>

  constructor (opts: HostOptions) {
    this.paths = homePaths(opts.home)
    this.config = opts.config
    this.log = createLogger('amesh', opts.logFile)
  }

  async start (): Promise<void> {
    mkdirSync(this.paths.home, { recursive: true, mode: 0o700 })
    chmodSync(this.paths.home, 0o700)
    await this.openStore()
    writeFileSync(this.paths.pidFile, `${process.pid}\n`)
    this.ownsPidFile = true
    const privateKey = await loadOrCreateHostKey(this.paths.hostKey)
    const remembered = await this.peerBook.list()
    const bootstrapPeers = [...new Set([...this.config.peers, ...remembered])]
    this.libp2p = await buildLibp2p({
      privateKey,
      listen: this.config.listen,
      peers: bootstrapPeers,
      mdns: this.config.mdns
    })
    this.keeper = new BootstrapKeeper(this.libp2p, this.log)
    for (const addr of bootstrapPeers) this.keeper.add(addr)
    this.directory = new Directory(this.db, this.committer, this.libp2p.peerId.toString())
    await this.directory.load()
    this.cards = new LocalCards(this.libp2p)
    this.exchange = new CardExchange(this.libp2p, this.directory, () => this.nodes.list().map((n) => this.cards.cardOf(n)), this.log)
    await this.exchange.start()
    this.acl = new AclService(this)
    this.authorizeSend = async (packet, from, target) => await this.acl.authorizeSend(packet, from, target)
    this.createChild = async (name, parent) => await this.acl.createChild(name, parent)
    this.delivery = new DeliveryService({
      libp2p: this.libp2p,
      committer: this.committer,
      inbox: this.inbox,
      outbox: this.outbox,
      admit: async (packet, remote) => await admitPacket(this, packet, remote),
      onDenied: (packet, denial) => this.acl.deniedNotice(packet, denial),
      label: (id) => this.label(id),
      log: this.log,
      outcomes: { delivered: async (e) => await this.receipts.delivered(e), dead: async (d) => await this.receipts.dead(d) }
    })
    this.receipts = new ReceiptService({
      db: this.db,
      committer: this.committer,
      libp2p: this.libp2p,
      inbox: this.inbox,
      consumption: this.consumption,
      localNode: (id) => this.nodes.get(id),
      hostOf: async (id) => this.directory.get(id)?.hostPeerId, // the sender's card: it was verified to admit the packet
      hideRead: () => this.config.hideReadReceipts,
      log: this.log
    })
    await this.consumption.warm(this.nodes.list().map((n) => n.record.id))
    await this.acl.start()
    await this.delivery.start()
    await this.receipts.start()
    this.wirePeerEvents()
    this.keeper.start()
    this.retentionTimer = setInterval(() => { void this.retention() }, RETENTION_INTERVAL)
    this.retentionTimer.unref()
    setImmediate(() => { void this.retention() })
    this.log(`host ${this.libp2p.peerId.toString()} listening on ${this.libp2p.getMultiaddrs().map(String).join(' ')}`)
  }

  private async openStore (): Promise<void> {
    try {
      this.db = await openDb(this.paths.store)
    } catch (err) {
      if (err instanceof StoreLockedError) {
        throw new StoreLockedError(`amesh is already running for home ${this.paths.home}${this.pidHint()}`, { cause: err })
      }
      throw err
    }
    this.committer = new Committer(batchTarget(this.db), this.config.durability)
    this.nodes = new NodeStore(this.db, this.committer)
    await this.nodes.load()
    this.inbox = new InboxStore(this.db, this.committer, this.config.inboxPerNode, this.config.dedupWindow)
    this.consumption = new ConsumptionStore(this.db, this.committer, this.inbox)
    this.outbox = new OutboxStore(this.db, this.committer, this.config.outboxPerDestination)
    await this.outbox.load()
    this.peerBook = new PeerBook(this.db, this.committer)
  }

  private pidHint (): string {
    try {
      return ` (pid ${readFileSync(this.paths.pidFile, 'utf8').trim()})`
    } catch {
      return ''
    }
  }

  private wirePeerEvents (): void {
    this.libp2p.addEventListener('peer:discovery', (evt) => {
      const { id, multiaddrs } = evt.detail
      if (this.libp2p.getConnections(id).length > 0) return
      const addrs = multiaddrs.length > 0 ? multiaddrs : undefined
      void this.libp2p.dial(addrs ?? id).catch((err) => this.log(`dial ${id.toString()} failed: ${errorMessage(err)}`))
    })
    this.libp2p.addEventListener('peer:identify', (evt) => {
      void this.exchange.exchangeWithRetry(evt.detail.peerId).catch((err) => this.log(`cards with ${evt.detail.peerId.toString()}: ${errorMessage(err)}`))
    })
  }

  /** A node id's name, when this host knows it. */
  label (nodeId: string): string {
    return this.nodes.get(nodeId)?.record.name ?? this.directory.get(nodeId)?.name ?? nodeId
  }

  /** Dial a peer address now and remember it as a bootstrap peer. */
  async join (addr: string): Promise<string> {
    const ma = multiaddr(addr)
    const conn = await this.libp2p.dial(ma, { signal: AbortSignal.timeout(15_000) })
    await this.peerBook.add(addr)
    this.keeper.add(addr)
    await this.exchange.exchange(conn.remotePeer).catch(() => 0)
    return conn.remotePeer.toString()
  }

  /** `amesh join --forget`: the address is no longer a bootstrap peer of later starts. */
  async forget (addr: string): Promise<boolean> {
    this.keeper.remove(addr)
    return await this.peerBook.remove(addr)
  }

  /** `amesh node add`: create a node, with a parent when given (lineage is added by the ACL layer). */
  async addNode (name: string, parent?: string): Promise<LocalNode> {
    const node = await (this.createChild?.(name, parent) ?? this.nodes.create(name, 'external'))
    this.announce()
    return node
  }

  /** Tell connected hosts about a new or changed local node. */
  announce (): void {
    void this.exchange.exchangeAll(3)
    this.onAnnounce?.()
  }

  /**
   * Retention pass (at start, then every RETENTION_INTERVAL): acked inbox
   * entries past retention_age_ms / retention_keep, message ids older than
   * the dedup window, dead letters older than dead_retention_ms.
   */
  private async retention (): Promise<void> {
    if (this.retaining || this.stopping !== undefined) return
    this.retaining = true
    try {
      const now = Date.now()
      let inbox = 0
      for (const node of this.nodes.list()) {
        inbox += await this.inbox.prune(node.record.id, now - this.config.retentionAge, this.config.retentionKeep)
      }
      const dedup = await this.inbox.pruneDedup(now)
      const dead = await this.outbox.pruneDead(now - this.config.deadRetention)
      this.log(`retention pass: pruned ${inbox} inbox entries, ${dedup} message ids, ${dead} dead letters`)
    } catch (err) {
      this.log(`retention: ${errorMessage(err)}`)
    } finally {
      this.retaining = false
    }
  }

  private retaining = false
  private ownsPidFile = false

  async stop (): Promise<void> {
    this.stopping ??= this.doStop()
    await this.stopping
  }

  private async doStop (): Promise<void> {
    clearInterval(this.retentionTimer)
    this.keeper?.stop()
    await this.receipts?.stop().catch(() => {})
    await this.delivery?.stop().catch(() => {})
    try { await this.libp2p?.stop() } catch { /* stopping anyway */ }
    await this.committer?.drain().catch(() => {})
    await this.db?.close().catch(() => {})
    // only the daemon that wrote the pid file removes it: a failed second start must not
    if (this.ownsPidFile) rmSync(this.paths.pidFile, { force: true })
  }
}
