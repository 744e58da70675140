// Card updates over gossipsub, for speed: a host publishes its nodes' signed
// cards when they appear or change and on every republish; every host learns
// what arrives into its directory (verified there). Lookups never depend on
// gossip: the DHT stays the source.

import type { Libp2p, Message, PubSub } from '@libp2p/interface'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { SignedAgentCard } from './card.js'
import type { Directory } from './directory.js'
import { MAX_CARD_RECORD_BYTES, decodeCardRecord, encodeCardRecord } from './records.js'

export const CARDS_TOPIC = '/amesh/cards/1.0.0'

export class CardGossip {
  private readonly onMessage = (evt: CustomEvent<Message>): void => { void this.receive(evt.detail) }

  constructor (private readonly libp2p: Libp2p, private readonly directory: Directory, private readonly log: Logger) {}

  private get pubsub (): PubSub {
    return (this.libp2p as Libp2p<{ pubsub: PubSub }>).services.pubsub
  }

  start (): void {
    this.pubsub.addEventListener('message', this.onMessage)
    this.pubsub.subscribe(CARDS_TOPIC)
  }

  stop (): void {
    this.pubsub.removeEventListener('message', this.onMessage)
    try { this.pubsub.unsubscribe(CARDS_TOPIC) } catch { /* stopping */ }
  }

  /** Publish a card; best effort (nobody subscribed yet is fine). */
  async publish (card: SignedAgentCard): Promise<void> {
    try {
      await this.pubsub.publish(CARDS_TOPIC, encodeCardRecord(card))
    } catch (err) {
      this.log(`gossip: publish failed: ${errorMessage(err)}`)
    }
  }

  private async receive (msg: Message): Promise<void> {
    if (msg.topic !== CARDS_TOPIC) return
    if (msg.data.length > MAX_CARD_RECORD_BYTES) return
    try {
      await this.directory.learn(decodeCardRecord(msg.data).card)
    } catch (err) {
      this.log(`gossip: rejected a card: ${errorMessage(err)}`)
    }
  }
}
