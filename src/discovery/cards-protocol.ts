import * as lp from 'it-length-prefixed'
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { PeerLimiter, type LimitVerdict, type PeerLimitInit } from '../util/peer-limit.js'
import type { SignedAgentCard } from './card.js'
import type { Directory } from './directory.js'
import { ON_LIMITED, connectionTo } from '../util/streams.js'

export const CARDS_PROTOCOL = '/amesh/cards/1.0.0'
const MAX_MESSAGE = 4 * 1024 * 1024
const TIMEOUT = 5000
/** How often connected peers whose cards never came through on their connection (an exchange that failed every retry) are asked again, ms. */
export const CATCH_UP_INTERVAL = 30_000
/** Cards read from one message. */
const MAX_CARDS_PER_MESSAGE = 10_000
/** Rejected cards (bad, expired, not served by the peer) a peer may send per window before it is throttled. */
export const REJECTED_CARD_BUDGET = 500

interface CardsMessage { cards: unknown[] }

const enc = new TextEncoder()
const dec = new TextDecoder()

async function readOne (stream: Stream): Promise<CardsMessage> {
  for await (const chunk of lp.decode(stream.source, { maxDataLength: MAX_MESSAGE })) {
    const v: unknown = JSON.parse(dec.decode(chunk.subarray()))
    if (typeof v !== 'object' || v === null || !Array.isArray((v as CardsMessage).cards)) throw new Error('bad cards message')
    return v as CardsMessage
  }
  throw new Error('no cards message')
}

async function writeOne (stream: Stream, msg: CardsMessage): Promise<void> {
  await stream.sink(lp.encode([enc.encode(JSON.stringify(msg))]))
}

/**
 * Direct card exchange between connected hosts: each side sends the signed
 * cards of its local nodes and receives the other's. Used on connect and when
 * a local node appears; the DHT serves hosts that are not connected.
 *
 * Each host remembers, per peer, the connection on which cards last went both
 * ways (whichever side opened the stream). After that, card updates arrive by
 * gossip and by the exchange a host runs when one of its nodes appears, so a
 * resolver asks a peer again only on a new connection (`exchangeUnexchanged`),
 * and concurrent resolvers share the exchange already in flight with a peer.
 */
export class CardExchange {
  /** peer id -> id of the connection cards were last exchanged on */
  private readonly exchangedOn = new Map<string, string>()
  /** peer id -> the exchange running with it (the latest one started) */
  private readonly inFlight = new Map<string, Promise<number>>()
  /** peer id -> exchanges that peer opened with this host (while connected) */
  private readonly servedFrom = new Map<string, number>()
  /** peers over their card quota or sending junk: throttled, then disconnected */
  private readonly limiter: PeerLimiter
  private readonly onDisconnect = (evt: CustomEvent<PeerId>): void => {
    const peer = evt.detail.toString()
    this.exchangedOn.delete(peer)
    this.servedFrom.delete(peer)
  }

  constructor (private readonly libp2p: Libp2p, private readonly directory: Directory,
    private readonly localCards: () => SignedAgentCard[], private readonly log: Logger, limits: PeerLimitInit = {}) {
    this.limiter = new PeerLimiter({ budget: REJECTED_CARD_BUDGET, ...limits })
  }

  async start (): Promise<void> {
    await this.libp2p.handle(CARDS_PROTOCOL, ({ stream, connection }) => { void this.serve(stream, connection) }, { maxInboundStreams: 256, maxOutboundStreams: 256, ...ON_LIMITED })
    this.libp2p.addEventListener('peer:disconnect', this.onDisconnect)
    // on a loaded machine the exchange run on identify can fail all its retries: catch up later (a no-op once all are exchanged)
    const catchUp = setInterval(() => { void this.exchangeUnexchanged() }, CATCH_UP_INTERVAL)
    catchUp.unref()
    this.libp2p.addEventListener('stop', () => {
      clearInterval(catchUp)
      this.libp2p.removeEventListener('peer:disconnect', this.onDisconnect)
    }, { once: true })
  }

  private async serve (stream: Stream, connection: Connection): Promise<void> {
    const peer = connection.remotePeer.toString()
    this.servedFrom.set(peer, (this.servedFrom.get(peer) ?? 0) + 1)
    try {
      const msg = await readOne(stream)
      await writeOne(stream, { cards: this.localCards() })
      await this.learnAll(peer, msg.cards)
      this.exchangedOn.set(peer, connection.id)
    } catch (err) {
      this.log(`cards: serving failed: ${errorMessage(err)}`)
      stream.abort(new Error('cards exchange failed'))
    }
  }

  /** How many exchanges a connected peer has opened with this host (forgotten when it disconnects). */
  servedCount (peer: string): number {
    return this.servedFrom.get(peer) ?? 0
  }

  /** True when cards went both ways with this peer on a connection that is still open. */
  exchangedWith (peer: PeerId): boolean {
    const id = this.exchangedOn.get(peer.toString())
    return id !== undefined && this.libp2p.getConnections(peer).some((c) => c.id === id)
  }

  /** Exchange cards with one peer now (a new exchange, even if one is in flight); returns how many new cards were learnt. */
  async exchange (peer: PeerId): Promise<number> {
    const key = peer.toString()
    const run = this.exchangeOnce(peer)
    this.inFlight.set(key, run)
    try {
      return await run
    } finally {
      if (this.inFlight.get(key) === run) this.inFlight.delete(key)
    }
  }

  private async exchangeOnce (peer: PeerId): Promise<number> {
    const signal = AbortSignal.timeout(TIMEOUT)
    const connection = await connectionTo(this.libp2p, peer, { signal })
    const stream = await connection.newStream(CARDS_PROTOCOL, { signal, ...ON_LIMITED })
    try {
      await writeOne(stream, { cards: this.localCards() })
      const reply = await readOne(stream)
      const learnt = await this.learnAll(peer.toString(), reply.cards)
      this.exchangedOn.set(peer.toString(), connection.id)
      return learnt
    } finally {
      await stream.close().catch(() => {})
    }
  }

  /** Exchange with one peer, retrying with backoff when it fails (a loaded peer may time out). */
  async exchangeWithRetry (peer: PeerId, attempts = 4): Promise<number> {
    for (let i = 1; ; i++) {
      try {
        return await this.exchange(peer)
      } catch (err) {
        if (i >= attempts || this.libp2p.getConnections(peer).length === 0) throw err
        await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (i - 1)))
      }
    }
  }

  /** Exchange with every connected peer (best effort); `attempts` > 1 retries failed peers with backoff. */
  async exchangeAll (attempts = 1): Promise<number> {
    return await this.eachPeer(this.libp2p.getPeers(), async (p) => await this.exchangeWithRetry(p, attempts))
  }

  /**
   * Exchange with the connected peers whose cards this host has not received
   * on their current connection; an exchange already in flight with a peer is
   * awaited rather than repeated. Best effort; returns how many new cards were learnt.
   */
  async exchangeUnexchanged (): Promise<number> {
    const peers = this.libp2p.getPeers().filter((p) => !this.exchangedWith(p))
    return await this.eachPeer(peers, async (p) => await (this.inFlight.get(p.toString()) ?? this.exchange(p)))
  }

  private async eachPeer (peers: PeerId[], run: (p: PeerId) => Promise<number>): Promise<number> {
    const counts = await Promise.all(peers.map(async (p) => await run(p).catch((err) => {
      this.log(`cards: exchange with ${p.toString()} failed: ${errorMessage(err)}`)
      return 0
    })))
    return counts.reduce((a, b) => a + b, 0)
  }

  /** Learn the cards one peer told; a peer over its quota or budget is throttled (the rest ignored unverified), then disconnected. */
  private async learnAll (peer: string, cards: unknown[]): Promise<number> {
    if (cards.length === 0) return 0
    if (this.limiter.isThrottled(peer)) {
      await this.overLimit(peer, this.limiter.strike(peer), `sent ${cards.length} more cards while throttled`)
      return 0
    }
    let n = 0
    let rejected = 0
    let firstReason = ''
    for (const card of cards.slice(0, MAX_CARDS_PER_MESSAGE)) {
      let verdict: LimitVerdict = 'ok'
      try {
        if (await this.directory.learn(card, peer) !== undefined) n++
      } catch (err) {
        if (err instanceof Error && err.name === 'CardQuotaError') {
          await this.overLimit(peer, this.limiter.strike(peer), errorMessage(err))
          break
        }
        rejected++
        if (firstReason === '') firstReason = errorMessage(err)
        verdict = this.limiter.spend(peer)
      }
      if (verdict !== 'ok') { await this.overLimit(peer, verdict, `${rejected} cards rejected`); break }
    }
    if (rejected > 0) this.log(`cards: rejected ${rejected} of ${cards.length} cards from ${peer}: ${firstReason}`)
    return n
  }

  private async overLimit (peer: string, verdict: Exclude<LimitVerdict, 'ok'>, why: string): Promise<void> {
    if (verdict === 'throttled') {
      this.log(`cards: peer ${peer} throttled for ${this.limiter.throttleMs / 1000} s: ${why}; its cards are ignored meanwhile`)
      return
    }
    this.log(`cards: disconnecting peer ${peer}: ${why}`)
    const conns = this.libp2p.getConnections().filter((c) => c.remotePeer.toString() === peer)
    await Promise.all(conns.map(async (c) => await c.close().catch(() => c.abort(new Error('over card limits')))))
  }
}
