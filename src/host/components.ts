// The composition root: builds every service of one host from the narrow
// components it names, and starts and stops them in one loop (lifecycle.ts).
// Nothing is installed on a shared object afterwards: what a service needs
// is handed to it here, once.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import type { Libp2p } from '@libp2p/interface'
import { createAgents, type AgentsComponents, type AgentsService } from '../agents/service.js'
import { AclService } from '../authz/acl-service.js'
import { homePaths, type HomePaths } from '../control/paths.js'
import { Notices } from '../delivery/notices.js'
import { ReceiptService } from '../delivery/receipt-service.js'
import { DeliveryService, type Outcomes } from '../delivery/service.js'
import { InboxTransport } from '../delivery/transport.js'
import { CardExchange } from '../discovery/cards-protocol.js'
import { Directory } from '../discovery/directory.js'
import type { DiscoveryOptions } from '../discovery/discovery.js'
import { createDiscovery, type DiscoveryService } from '../discovery/service.js'
import type { SshJoins } from '../discovery/tunnels.js'
import { NodeRegistry, type Announcer } from '../routing/nodes.js'
import { Resolver } from '../routing/resolve.js'
import { Sender } from '../routing/send.js'
import { Broadcaster } from '../routing/broadcast.js'
import type { AnswerLookup } from '../authz/acl-service.js'
import { decodePacket } from '../packet/codec.js'
import type { Committer, RawDb } from '../store/db.js'
import type { ConsumptionStore } from '../store/consumption.js'
import { InboxStore } from '../store/inbox.js'
import { NodeStore } from '../store/nodes.js'
import { OutboxStore, type Doomed, type OutboxEntry } from '../store/outbox.js'
import { createLogger, type Logger } from '../util/log.js'
import { a2aAgents, type A2aAgents } from './a2a-agents.js'
import { BootstrapKeeper } from './bootstrap-keeper.js'
import type { HostConfig } from './config.js'
import { loadOrCreateHostKey } from './host-key.js'
import { Lifecycle } from './lifecycle.js'
import { buildLibp2p, type Libp2pOptions } from './libp2p.js'
import { ReservationPolicy } from './relay.js'
import { grantedReservations } from './relay-wiring.js'
import { LocalCards } from '../discovery/local-cards.js'
import type { PeerBook } from './peer-book.js'
import { closeValues, openStores, type OpenLevel, type StoreFatal, type Stores } from './stores.js'
import type { StoreGuard } from '../store/store-guard.js'
import { PeerEvents, Retention } from './upkeep.js'

export interface HostOptions {
  home: string
  config: HostConfig
  /** log to this file instead of stderr */
  logFile?: string
  /** DHT announcement and lookup, card gossip, SSH joins (default: on, with these options); false: off */
  discovery?: DiscoveryOptions | false
  /** managed nodes and the placement protocol (default: off; the daemon turns them on) */
  agents?: boolean
  /** the store failed a write and cannot be reopened (default: log and exit with EXIT_STORE_FAULT) */
  onStoreFatal?: StoreFatal
  /** libp2p transports instead of TCP (the simulation's in-memory transport; config.listen names its addresses) */
  transports?: Libp2pOptions['transports']
  /** an abstract-level store instead of LevelDB on disk (the simulation's memory-level) */
  openLevel?: OpenLevel
  /** libp2p's connection monitor settings instead of the host's (the simulation's ping timeout: its hosts share one event loop) */
  connectionMonitor?: Libp2pOptions['connectionMonitor']
  /** the DHT's routing-table ping timeouts instead of kad-dht's (the simulation's, for the same reason) */
  dhtPings?: Libp2pOptions['dhtPings']
}

/** Every component of one running host; each service is handed only the ones it names. */
export interface Components {
  readonly paths: HomePaths
  readonly config: HostConfig
  readonly log: Logger
  readonly startedAt: number
  readonly db: RawDb
  readonly committer: Committer
  /** refuses writes after a storage fault or under the low-space watermark; reopens the store */
  readonly guard: StoreGuard
  readonly nodes: NodeStore
  readonly inbox: InboxStore
  /** what sessions did with each inbox: pushed and read marks, presence (only reading moves a cursor) */
  readonly consumption: ConsumptionStore
  readonly outbox: OutboxStore
  readonly peerBook: PeerBook
  readonly libp2p: Libp2p
  readonly keeper: BootstrapKeeper
  readonly directory: Directory
  readonly cards: LocalCards
  readonly exchange: CardExchange
  readonly resolver: Resolver
  readonly notices: Notices
  readonly acl: AclService
  readonly registry: NodeRegistry
  readonly delivery: DeliveryService
  readonly sender: Sender
  /** external A2A agents as nodes (`node add-a2a`): their clients and their transport */
  readonly a2a: A2aAgents
  /** `send` to "broadcast": one copy per group member through the sender */
  readonly broadcaster: Broadcaster
  /** receipt histories of sent messages; receipts for the senders of messages read or pushed here */
  readonly receipts: ReceiptService
  readonly discovery?: DiscoveryService
  readonly joins?: SshJoins
  readonly agents?: AgentsService
  /** a node id's name, when this host knows it */
  readonly label: (nodeId: string) => string
  /** tell other hosts about a new or changed local node */
  readonly announce: () => void
}

/** A started host: its components, and the one way to stop them all. */
export interface RunningHost extends Components {
  readonly lifecycle: Lifecycle
  stop: () => Promise<void>
}

/** The libp2p peer (started), bootstrapped from config peers and the peers joined before. */
async function openLibp2p (paths: HomePaths, config: HostConfig, peerBook: PeerBook, log: Logger, seams: Pick<Libp2pOptions, 'transports' | 'connectionMonitor' | 'dhtPings'>): Promise<{ libp2p: Libp2p, bootstrapPeers: string[], policy: ReservationPolicy }> {
  const privateKey = await loadOrCreateHostKey(paths.hostKey)
  const remembered = await peerBook.list()
  // configured relays are kept connected like bootstrap peers: the relay client reserves on connected relays
  const bootstrapPeers = [...new Set([...config.peers, ...config.relays, ...remembered])]
  const policy = new ReservationPolicy(config.relay.accept, log)
  const libp2p = await buildLibp2p({ privateKey, listen: config.listen, peers: bootstrapPeers, mdns: config.mdns, relay: config.relay, reservationPolicy: policy, log, ...seams })
  return { libp2p, bootstrapPeers, policy }
}

/** The host's announced addresses changed (a relay reservation made or lost): tell other hosts soon, once per burst. */
function announceOnAddressChange (libp2p: Libp2p, announce: () => void): void {
  let last = libp2p.getMultiaddrs().map(String).join(' ')
  let timer: NodeJS.Timeout | undefined
  libp2p.addEventListener('self:peer:update', () => {
    const now = libp2p.getMultiaddrs().map(String).join(' ')
    if (now === last) return
    last = now
    clearTimeout(timer)
    timer = setTimeout(announce, ADDRESS_ANNOUNCE_DELAY)
    timer.unref()
  })
}

/** Wait this long after the host's addresses changed before announcing its cards again. */
const ADDRESS_ANNOUNCE_DELAY = 500

/** Build and start one host: the store, the libp2p peer, discovery, the ACL, delivery and routing, in order. */
export async function startHost (opts: HostOptions): Promise<RunningHost> {
  const paths = homePaths(opts.home)
  const { config } = opts
  const log = createLogger('amesh', opts.logFile)
  mkdirSync(paths.home, { recursive: true, mode: 0o700 })
  chmodSync(paths.home, 0o700)
  const lifecycle = new Lifecycle(log)
  const stores = await openStores(paths, config, log, opts.onStoreFatal, opts.openLevel)
  writeFileSync(paths.pidFile, `${process.pid}\n`)
  lifecycle.add('store', {
    stop: async () => {
      stores.guard.stop()
      stores.collector?.stop()
      await stores.committer.drain().catch(() => {})
      await stores.db.close().catch(() => {})
      closeValues(stores)
      rmSync(paths.pidFile, { force: true })
    }
  })
  await lifecycle.start() // the store is open: from here a failure closes it
  try {
    const { libp2p, bootstrapPeers, policy } = await openLibp2p(paths, config, stores.peerBook, log, { transports: opts.transports, connectionMonitor: opts.connectionMonitor, dhtPings: opts.dhtPings })
    lifecycle.add('libp2p', { stop: async () => { try { await libp2p.stop() } catch { /* stopping anyway */ } } })
    await lifecycle.start() // libp2p runs (createLibp2p started it): from here a failure stops it
    const host = compose({ ...opts, paths, log, lifecycle }, stores, libp2p)
    policy.use(grantedReservations(host.acl, host.directory))
    announceOnAddressChange(libp2p, host.announce)
    for (const addr of bootstrapPeers) host.keeper.add(addr)
    await lifecycle.start()
    log(`host ${libp2p.peerId.toString()} listening on ${libp2p.getMultiaddrs().map(String).join(' ')}`)
    return host
  } catch (err) {
    await lifecycle.stop()
    throw err
  }
}

type Base = HostOptions & { paths: HomePaths, log: Logger, lifecycle: Lifecycle }

/** Wire the services (nothing runs yet) and list them in the lifecycle in start order. */
function compose (base: Base, stores: Stores, libp2p: Libp2p): RunningHost {
  const { paths, config, log, lifecycle } = base
  const { nodes, inbox } = stores
  const directory = new Directory(stores.db, stores.committer, libp2p.peerId.toString())
  lifecycle.add('directory', { start: async () => { await directory.load() } })
  const cards = new LocalCards(libp2p)
  // a2a nodes stay off the mesh: no card of theirs is exchanged, gossiped or published
  const meshNodes = { list: () => nodes.list().filter((n) => n.record.kind !== 'a2a') }
  const exchange = new CardExchange(libp2p, directory, () => meshNodes.list().map((n) => cards.cardOf(n)), log)
  lifecycle.add('card exchange', { start: async () => { await exchange.start() } })
  const keeper = new BootstrapKeeper({ libp2p, peerBook: stores.peerBook, exchange, log, redial: config.relay.retry })
  const discovery = base.discovery === false ? undefined : createDiscovery({ libp2p, directory, log, cards, nodes: meshNodes, db: stores.db, committer: stores.committer }, base.discovery ?? {})
  const resolver = new Resolver({ nodes, directory, exchange, finders: discovery !== undefined ? [discovery] : [] })
  const { label } = resolver
  const notices = new Notices({ inbox, log })
  // RETURN's destination rule reads the message answered: in the sender's inbox, or among this host's sent messages (receipts, made below)
  const answers: AnswerLookup = {
    received: async (nodeId, msgId) => {
      const e = await inbox.entryById(nodeId, msgId)
      if (e === undefined) return undefined
      const p = decodePacket(e.packet)
      return { from: p.from, return_to: p.return_to }
    },
    sent: async (msgId) => await receipts.history(msgId)
  }
  const acl = new AclService({ db: stores.db, committer: stores.committer, nodes, directory, exchange, libp2p, resolver, notices, label, policy: config, log, answers })
  lifecycle.add('acl', acl)
  const announcers: Announcer[] = [{ announce: () => { void exchange.exchangeAll(3) } }]
  if (discovery !== undefined) announcers.push(discovery)
  const registry = new NodeRegistry({ nodes, creator: acl, announcers })
  const receipts = receiptService(stores, libp2p, directory, resolver, config, log)
  const outcomes: Outcomes = { deliveredOps: (e: OutboxEntry[]) => receipts.deliveredOps(e), deadOps: (d: Doomed[]) => receipts.deadOps(d), settled: (e: OutboxEntry[]) => receipts.settled(e), readsPacket: (e: OutboxEntry) => receipts.readsPacket(e) }
  const delivery = new DeliveryService({ libp2p, committer: stores.committer, inbox, outbox: stores.outbox, admission: acl, notices, label, log, outcomes })
  lifecycle.add('delivery', delivery)
  lifecycle.add('receipts', receipts)
  const a2a = a2aAgents({ stores, notices, label, log, outcomes })
  lifecycle.add('a2a agents', a2a.transport)
  const sender = new Sender({ registry, resolver, authorizer: acl, transports: { local: new InboxTransport({ inbox }), remote: delivery, a2a: a2a.transport }, inbox, ttl: config.ttl })
  const broadcaster = new Broadcaster({ registry, resolver, nodes, directory, exchange, sender })
  lifecycle.add('peer events', new PeerEvents({ libp2p, exchange, log }))
  lifecycle.add('bootstrap keeper', keeper)
  lifecycle.add('retention', new Retention({ nodes, inbox, outbox: stores.outbox, config, log }))
  // discovery starts the remembered ssh joins and stops them with itself
  if (discovery !== undefined) lifecycle.add('discovery', discovery)
  const components: Components = {
    paths, config, log, startedAt: Date.now(), ...stores, libp2p, keeper, directory, cards, exchange,
    resolver, notices, acl, registry, delivery, sender, broadcaster, a2a, receipts, discovery, joins: discovery?.joins, label, announce: () => registry.announce()
  }
  const agents = base.agents === true ? managedNodes(components, lifecycle) : undefined
  return { ...components, agents, lifecycle, stop: async () => await lifecycle.stop() }
}

/** Receipts: the sender's histories and the receipt protocol (it reports pushes and reads of the consumption store). */
function receiptService (stores: Stores, libp2p: Libp2p, directory: Directory, resolver: Resolver, config: HostConfig, log: Logger): ReceiptService {
  return new ReceiptService({
    db: stores.db,
    committer: stores.committer,
    libp2p,
    inbox: stores.inbox,
    outbox: stores.outbox,
    consumption: stores.consumption,
    localNode: (id) => stores.nodes.get(id),
    hostOf: async (id) => directory.get(id)?.hostPeerId, // the sender's card: it was verified to admit the packet
    resolve: async (to) => { const t = await resolver.resolve(to); return { id: t.id, host: t.kind === 'remote' ? t.host : 'local' } },
    hideRead: () => config.hideReadReceipts,
    log
  })
}

/** Managed nodes: the manager and its placement protocol; their processes end (desired state kept) when the host stops. */
function managedNodes (c: Components, lifecycle: Lifecycle): AgentsService {
  const agents = createAgents(agentsComponents(c))
  lifecycle.add('agents', agents)
  return agents
}

/** What the managed-node service takes from the host's components. */
export function agentsComponents (c: Components): AgentsComponents {
  return {
    libp2p: c.libp2p,
    nodes: c.nodes,
    cards: c.cards,
    directory: c.directory,
    exchange: c.exchange,
    acl: c.acl,
    resolve: async (target) => await c.resolver.resolve(target),
    label: c.label,
    announce: c.announce,
    paths: c.paths,
    maxDepth: c.config.maxDepth,
    log: c.log
  }
}
