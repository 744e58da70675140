import * as lp from 'it-length-prefixed'
import type { Libp2p, PeerId, Stream } from '@libp2p/interface'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { SignedAgentCard } from './card.js'
import type { Directory } from './directory.js'

export const CARDS_PROTOCOL = '/amesh/cards/1.0.0'
const MAX_MESSAGE = 4 * 1024 * 1024
const TIMEOUT = 5000

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
 */
export class CardExchange {
  constructor (private readonly libp2p: Libp2p, private readonly directory: Directory,
    private readonly localCards: () => SignedAgentCard[], private readonly log: Logger) {}

  async start (): Promise<void> {
    await this.libp2p.handle(CARDS_PROTOCOL, ({ stream }) => { void this.serve(stream) }, { maxInboundStreams: 256, maxOutboundStreams: 256 })
  }

  private async serve (stream: Stream): Promise<void> {
    try {
      const msg = await readOne(stream)
      await writeOne(stream, { cards: this.localCards() })
      await this.learnAll(msg.cards)
    } catch (err) {
      this.log(`cards: serving failed: ${errorMessage(err)}`)
      stream.abort(new Error('cards exchange failed'))
    }
  }

  /** Exchange cards with one peer; returns how many new cards were learnt. */
  async exchange (peer: PeerId): Promise<number> {
    const signal = AbortSignal.timeout(TIMEOUT)
    const stream = await this.libp2p.dialProtocol(peer, CARDS_PROTOCOL, { signal })
    try {
      await writeOne(stream, { cards: this.localCards() })
      const reply = await readOne(stream)
      return await this.learnAll(reply.cards)
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
    const peers = this.libp2p.getPeers()
    const counts = await Promise.all(peers.map(async (p) => await this.exchangeWithRetry(p, attempts).catch((err) => {
      this.log(`cards: exchange with ${p.toString()} failed: ${errorMessage(err)}`)
      return 0
    })))
    return counts.reduce((a, b) => a + b, 0)
  }

  private async learnAll (cards: unknown[]): Promise<number> {
    let n = 0
    for (const card of cards.slice(0, 10_000)) {
      try {
        if (await this.directory.learn(card) !== undefined) n++
      } catch (err) {
        this.log(`cards: rejected a card: ${errorMessage(err)}`)
      }
    }
    return n
  }
}
