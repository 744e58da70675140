// Circuit relay v2 for amesh: a host may serve as a relay (opt-in, config
// `relay.serve`), and a host that is not publicly reachable reserves a slot
// on relays among the peers it is connected to (its bootstrap peers, config
// `relays:`), so that its relayed addresses go into its cards and peers can
// dial it through the relay (docs/DISCOVERY.md "Behind a NAT").
//
// The reservations are made here rather than by listening on `/p2p-circuit`
// (libp2p's "find me a relay" address): that one searches the network with a
// DHT random walk as long as it lacks a relay, on every host, relay or not,
// and a refusal is only written to libp2p's debug log. Here a reservation is
// asked of a connected relay by its own address (`<relay>/p2p-circuit`), and
// a refusal is kept with its reason for `amesh status` and the host's log.
import { RELAY_V2_HOP_CODEC, type CircuitRelayServerInit } from '@libp2p/circuit-relay-v2'
import type { Connection, IdentifyResult, Libp2p, PeerId, PeerStore, Startable, Topology } from '@libp2p/interface'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { defaultRelayRetry, type RelayConfig, type RelayRetry } from './config.js'
import type { RelayStatus } from '../control/wire.js'
import { Reachability, type ReachabilityState } from './reachability.js'

/** Relays a host that is not publicly reachable keeps a reservation on (two: one can fail without a gap). */
export const RELAYS_WANTED = 2
// How soon a relay is looked at and asked again is config `relay.retry`
// (RelayRetry, defaults in config.ts): connected relays are checked every
// `check` (5 s); a relay that refused is asked again after `refused` (30 s),
// doubling to `refused_max` (2 min), and at once when it reconnects; a
// reservation that failed for another reason is tried again after `failed`
// (5 s). The common one: libp2p was already asking that relay for a slot on
// its own (a relay that dialled us, or one it met) and ends that attempt with
// HadEnoughRelaysError, which ours joined.

/** The relay server's options from config: amesh's raised, bounded limits. */
export function relayServerInit (cfg: RelayConfig): CircuitRelayServerInit {
  return {
    reservations: {
      maxReservations: cfg.maxReservations,
      applyDefaultLimit: true,
      defaultDurationLimit: cfg.durationLimit,
      defaultDataLimit: BigInt(cfg.dataLimit)
    }
  }
}

/** Who may reserve on this relay; set once the ACL is built (until then: config `any` accepts, `granted` refuses). */
export class ReservationPolicy {
  private check?: (peer: string) => boolean
  constructor (readonly accept: RelayConfig['accept'], private readonly log?: Logger) {}

  use (check: (peer: string) => boolean): void { this.check = check }

  /** libp2p connection gater hook: true denies. */
  deny (peer: PeerId): boolean {
    if (this.accept === 'any') return false
    const ok = this.check?.(peer.toString()) ?? false
    if (!ok) this.log?.(`relay: refused a reservation from ${peer.toString()}: relay.accept is granted and none of its nodes holds this host's grant of /relay/reserve`)
    return !ok
  }
}

/** The parts of libp2p's internal components the relay client uses (libp2p hands every service all of them). */
export interface RelayClientComponents {
  registrar: { register: (protocol: string, topology: Topology) => Promise<string>, unregister: (id: string) => void }
  transportManager: { listen: (addrs: Multiaddr[]) => Promise<void> }
  addressManager: { getAddresses: () => Multiaddr[] }
  connectionManager: { getConnections: () => Connection[] }
  peerStore: Pick<PeerStore, 'get'>
  events: Pick<Libp2p, 'addEventListener' | 'removeEventListener'>
}

export interface RelayClientInit {
  /** this host serves as a relay: it does not reserve on others */
  serving: boolean
  log: Logger
  /** config `relay.retry` (the relay parts; default: defaultRelayRetry()) */
  retry?: Pick<RelayRetry, 'check' | 'refused' | 'refusedMax' | 'failed'>
}

interface Refusal { reason: string, at: number, retryAt: number, delay: number }

/** The reason a relay gave, in words an operator can act on. */
export function refusalReason (err: unknown): { reason: string, refused: boolean } {
  const text = errorMessage(err) + ' ' + String((err as { stack?: string }).stack ?? '')
  const status = /status ([A-Z_]+)/.exec(text)?.[1]
  if (status === 'PERMISSION_DENIED') return { refused: true, reason: 'PERMISSION_DENIED: the relay accepts only hosts its operator granted (relay.accept: granted); its operator can allow a node of this host with: amesh grant --host --to NODE --cmd /relay/reserve' }
  if (status === 'RESERVATION_REFUSED' || status === 'RESOURCE_LIMIT_EXCEEDED') return { refused: true, reason: `${status}: the relay holds as many reservations as it allows (relay.max_reservations)` }
  if (status !== undefined) return { refused: true, reason: `${status}: the relay refused the reservation` }
  // libp2p wraps the listener's error in one naming every address: keep the inner one
  const inner = /(\w*Error: .*)$/m.exec(errorMessage(err).split('\n').slice(1).join('\n'))?.[1]
  return { refused: false, reason: inner ?? errorMessage(err).split('\n')[0].trim() }
}

/** Reserves slots on connected relays while this host is not publicly reachable. */
export class RelayClient implements Startable {
  readonly reachability = new Reachability()
  private readonly pending = new Set<string>()
  private readonly refusals = new Map<string, Refusal>()
  private timer?: NodeJS.Timeout
  private topology?: string
  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => { this.reachability.observe(evt.detail) }
  private readonly retry: Pick<RelayRetry, 'check' | 'refused' | 'refusedMax' | 'failed'>

  constructor (private readonly components: RelayClientComponents, private readonly init: RelayClientInit) {
    this.retry = init.retry ?? defaultRelayRetry()
  }

  async start (): Promise<void> {
    this.components.events.addEventListener('peer:identify', this.onIdentify)
    if (this.init.serving) return
    this.topology = await this.components.registrar.register(RELAY_V2_HOP_CODEC, {
      onConnect: (peer, conn) => { this.refusals.delete(peer.toString()); this.consider(peer, conn) }
    })
    this.timer = setInterval(() => { void this.check() }, this.retry.check)
    this.timer.unref()
  }

  stop (): void {
    this.components.events.removeEventListener('peer:identify', this.onIdentify)
    clearInterval(this.timer)
    this.timer = undefined
    if (this.topology !== undefined) this.components.registrar.unregister(this.topology)
    this.topology = undefined
  }

  /** The relays this host announces relayed addresses through, by relay peer id. */
  inUse (): Map<string, string[]> {
    const out = new Map<string, string[]>()
    for (const a of this.components.addressManager.getAddresses()) {
      const text = a.toString()
      const m = /\/p2p\/([^/]+)\/p2p-circuit/.exec(text)
      if (m !== null) out.set(m[1], [...(out.get(m[1]) ?? []), text])
    }
    return out
  }

  state (): ReachabilityState { return this.reachability.state(this.components.addressManager.getAddresses()) }

  status (): Omit<RelayStatus, 'serving' | 'connections' | 'hole_punching'> {
    return {
      reachability: this.state(),
      nat: this.reachability.nat,
      relays: [...this.inUse()].map(([peer, addrs]) => ({ peer, addrs })),
      refused: [...this.refusals].map(([relay, r]) => ({ relay, reason: r.reason, at: new Date(r.at).toISOString() }))
    }
  }

  /**
   * Whether each connection's peer serves relays, read from the peer store
   * once its protocols are known (identify ran). The check ran a peer-store
   * read (a lock and a protobuf decode) per connection every check (5 s): in
   * an idle 10-host simulated mesh 1.8 % of all CPU, growing with hosts ×
   * connections. A peer that starts serving later is met by the topology.
   */
  private readonly servesRelay = new WeakMap<Connection, boolean>()

  private async check (): Promise<void> {
    for (const conn of this.components.connectionManager.getConnections()) {
      if (conn.limits != null || conn.status !== 'open') continue
      let serves = this.servesRelay.get(conn)
      if (serves === undefined) {
        const peer = await this.components.peerStore.get(conn.remotePeer).catch(() => undefined)
        serves = peer?.protocols.includes(RELAY_V2_HOP_CODEC) === true
        if (peer !== undefined && peer.protocols.length > 0) this.servesRelay.set(conn, serves)
      }
      if (serves) this.consider(conn.remotePeer, conn)
    }
  }

  private consider (peer: PeerId, conn: Connection): void {
    const id = peer.toString()
    if (this.init.serving || conn.limits != null || this.state() === 'public') return
    const used = this.inUse()
    if (used.has(id) || this.pending.has(id) || used.size + this.pending.size >= RELAYS_WANTED) return
    const refusal = this.refusals.get(id)
    if (refusal !== undefined && Date.now() < refusal.retryAt) return
    this.pending.add(id)
    void this.reserve(id, relayListenAddr(conn.remoteAddr, id)).finally(() => this.pending.delete(id))
  }

  private async reserve (id: string, addr: Multiaddr): Promise<void> {
    try {
      await withTimeout(this.components.transportManager.listen([addr]), RESERVE_TIMEOUT)
      if (!this.inUse().has(id)) throw new Error('the relay gave no address')
      this.refusals.delete(id)
      this.init.log(`relay: reserved a slot on ${id}; reachable as ${(this.inUse().get(id) ?? []).join(' ')}`)
    } catch (err) {
      const { reason, refused } = refusalReason(err)
      const now = Date.now()
      const before = this.refusals.get(id)
      const { refusedMax, refused: first, failed } = this.retry
      const delay = refused ? Math.min(refusedMax, before === undefined ? first : before.delay * 2) : failed
      this.refusals.set(id, { reason, at: now, retryAt: now + delay, delay })
      this.init.log(`relay: ${refused ? 'refused' : 'no'} reservation on ${id}: ${reason}`)
    }
  }
}

/** A reservation attempt that has not settled by then counts as failed (so one stuck attempt never blocks the others). */
export const RESERVE_TIMEOUT = 30 * SECOND

async function withTimeout<T> (p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms) })
  try { return await Promise.race([p, late]) } finally { clearTimeout(timer) }
}

/** `<relay address>/p2p/<relay>/p2p-circuit`: listen through that one relay. */
export function relayListenAddr (remote: Multiaddr, relay: string): Multiaddr {
  const base = remote.getPeerId() === null ? remote : remote.decapsulateCode(421)
  return multiaddr(`${base.toString()}/p2p/${relay}/p2p-circuit`)
}

export function relayClient (init: RelayClientInit): (components: RelayClientComponents) => RelayClient {
  return (components) => new RelayClient(components, init)
}
