// Bootstrap peers (config `peers`, `--peer`, and addresses joined with `amesh
// join`) are dialled once at start by libp2p's bootstrap module: a peer that
// was down then, or whose connection dropped later, was never dialled again,
// and a host whose only link to the mesh was that peer stayed alone. The
// keeper re-dials every bootstrap peer this host is not connected to, with a
// per-peer backoff (config `relay.retry.redial`, 5 s, doubling to `redial_max`,
// 1 min), reset once connected.
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Connection, Libp2p, PeerId } from '@libp2p/interface'
import type { CardExchange } from '../discovery/cards-protocol.js'
import { InvalidAddressError, UnreachableError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { REDIAL_MAX, REDIAL_MIN, type RelayRetry } from './config.js'
import type { PeerBook } from './peer-book.js'

export { REDIAL_MAX, REDIAL_MIN }
const TICK = 1_000
const DIAL_TIMEOUT = 10_000
const JOIN_TIMEOUT = 15 * SECOND

export interface BootstrapKeeperComponents {
  libp2p: Libp2p
  peerBook: Pick<PeerBook, 'add' | 'remove'>
  exchange: Pick<CardExchange, 'exchange'>
  log: Logger
  /** config `relay.retry` (its redial parts; default REDIAL_MIN doubling to REDIAL_MAX) */
  redial?: Pick<RelayRetry, 'redial' | 'redialMax'>
}

interface Peer { addr: Multiaddr, id: PeerId, delay: number, due: number, dialing: boolean }

export class BootstrapKeeper {
  private readonly peers = new Map<string, Peer>()
  private timer?: NodeJS.Timeout
  private readonly libp2p: Libp2p
  private readonly log: Logger
  private readonly min: number
  private readonly max: number

  constructor (private readonly components: BootstrapKeeperComponents) {
    this.libp2p = components.libp2p
    this.log = components.log
    this.min = components.redial?.redial ?? REDIAL_MIN
    this.max = components.redial?.redialMax ?? REDIAL_MAX
  }

  /** `amesh join`: dial a peer address now, remember it as a bootstrap peer, and exchange cards. */
  async join (addr: string): Promise<string> {
    const conn = await this.dialToJoin(addr)
    await this.components.peerBook.add(addr)
    this.add(addr)
    await this.components.exchange.exchange(conn.remotePeer).catch(() => 0)
    return conn.remotePeer.toString()
  }

  /** Dial for a join: a bad address is INVALID_ADDRESS, a failed dial UNREACHABLE (nothing is remembered then). */
  private async dialToJoin (addr: string): Promise<Connection> {
    let ma: Multiaddr
    try {
      ma = multiaddr(addr)
    } catch (err) {
      throw new InvalidAddressError(`not a multiaddr: ${addr} (${errorMessage(err)})`, { cause: err })
    }
    try {
      return await this.libp2p.dial(ma, { signal: AbortSignal.timeout(JOIN_TIMEOUT) })
    } catch (err) {
      const name = err instanceof Error ? err.name : ''
      if (['NoValidAddressesError', 'InvalidMultiaddrError', 'InvalidParametersError'].includes(name)) throw new InvalidAddressError(`cannot dial ${addr}: ${errorMessage(err)}`, { cause: err })
      throw new UnreachableError(`cannot reach ${addr}: ${errorMessage(err)}`, { cause: err })
    }
  }

  /** Keep this address connected (it must name its peer: `/p2p/<id>`); others are ignored. */
  add (addr: string): void {
    if (this.peers.has(addr)) return
    try {
      const ma = multiaddr(addr)
      const id = ma.getPeerId()
      if (id === null || id === this.libp2p.peerId.toString()) return
      // the first redial waits: libp2p's bootstrap module dials at start
      this.peers.set(addr, { addr: ma, id: peerIdFromString(id), delay: this.min, due: Date.now() + this.min, dialing: false })
    } catch (err) {
      this.log(`bootstrap peer ${addr} ignored: ${errorMessage(err)}`)
    }
  }

  /** `amesh join --forget`: stop re-dialling this address and forget it for later starts; true when it was remembered. */
  async forget (addr: string): Promise<boolean> {
    this.peers.delete(addr)
    return await this.components.peerBook.remove(addr)
  }

  start (): void {
    if (this.timer !== undefined) return
    this.timer = setInterval(() => { this.tick(Date.now()) }, TICK)
    this.timer.unref()
  }

  stop (): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  private tick (now: number): void {
    if (this.libp2p.status !== 'started') return
    for (const p of this.peers.values()) {
      if (this.libp2p.getConnections(p.id).length > 0) {
        p.delay = this.min
        p.due = now + this.min
      } else if (!p.dialing && now >= p.due) {
        void this.redial(p)
      }
    }
  }

  private async redial (p: Peer): Promise<void> {
    p.dialing = true
    try {
      await this.libp2p.dial(p.addr, { signal: AbortSignal.timeout(DIAL_TIMEOUT) })
      this.log(`bootstrap peer ${p.id.toString()} reconnected`)
    } catch (err) {
      p.delay = Math.min(p.delay * 2, this.max)
      this.log(`bootstrap peer ${p.id.toString()} unreachable (next try in ${p.delay / 1000} s): ${errorMessage(err)}`)
    } finally {
      p.due = Date.now() + p.delay
      p.dialing = false
    }
  }
}
