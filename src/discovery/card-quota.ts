// Per-host quota on the remote cards a directory keeps. A card is counted
// against the host that serves it (its hostPeerId); over the card exchange
// a peer may only tell the cards it serves itself, so one peer can fill its
// own share and never another host's, nor the whole directory.

import { defineError } from '../util/errors.js'

/** Remote cards kept per serving host (a host with more nodes than this is refused the rest). */
export const MAX_CARDS_PER_HOST = 2000

/** A card over its serving host's quota. */
export const CardQuotaError = defineError('CardQuotaError', 'CARD_QUOTA')
/** A card told over the exchange by a peer that does not serve it. */
export const CardNotFromPeerError = defineError('CardNotFromPeerError', 'CARD_NOT_FROM_PEER')

export class CardQuota {
  private readonly perHost = new Map<string, number>()

  constructor (readonly limit: number = MAX_CARDS_PER_HOST) {}

  count (host: string): number { return this.perHost.get(host) ?? 0 }

  /** Throws CardQuotaError when `host` has no room for one more card. */
  check (host: string): void {
    if (this.count(host) >= this.limit) throw new CardQuotaError(`host ${host} already has ${this.limit} cards here (its quota)`)
  }

  add (host: string): void { this.perHost.set(host, this.count(host) + 1) }

  remove (host: string): void {
    const n = this.count(host) - 1
    if (n > 0) this.perHost.set(host, n)
    else this.perHost.delete(host)
  }
}
