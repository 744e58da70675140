// Revocations arriving from peers (grant bundles, gossip), with a per-peer
// budget: revocations that matter here (see revocation-policy.ts) are always
// taken; the others cost the sending peer budget, and a peer over budget is
// throttled (the rest of what it sends is dropped unverified), then
// disconnected if it keeps sending. The log says which peer and why.

import { decodeRevocation, verifyRevocation, type Revocation } from '../acl/index.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { PeerLimiter, type LimitVerdict } from '../util/peer-limit.js'
import { MINUTE } from '../util/time.js'
import type { AclStore } from './acl-store.js'
import type { RevocationPolicy } from './revocation-policy.js'

/** Revocations that matter nowhere here a peer may send per window before it is throttled. */
export const REVOCATION_PEER_BUDGET = 10_000
export const REVOCATION_PEER_WINDOW = 10 * MINUTE

export interface RevocationIntakeInit {
  budget?: number
  window?: number
  throttleFor?: number
}

interface Tally { stored: number, pending: number, dropped: number, bad: number }

export class RevocationIntake {
  private readonly limiter: PeerLimiter

  constructor (private readonly store: AclStore, private readonly policy: RevocationPolicy, private readonly log: Logger,
    private readonly disconnect: (peer: string) => Promise<void>, init: RevocationIntakeInit = {}) {
    this.limiter = new PeerLimiter({ budget: init.budget ?? REVOCATION_PEER_BUDGET, window: init.window ?? REVOCATION_PEER_WINDOW, throttleFor: init.throttleFor ?? MINUTE })
  }

  /** Take the revocations one peer sent; returns how many were stored durably. */
  async take (revocations: readonly Uint8Array[], from: string): Promise<number> {
    if (revocations.length === 0) return 0
    if (this.limiter.isThrottled(from)) {
      await this.overLimit(from, this.limiter.strike(from), revocations.length)
      return 0
    }
    const tally: Tally = { stored: 0, pending: 0, dropped: 0, bad: 0 }
    for (let i = 0; i < revocations.length; i++) {
      const verdict = await this.takeOne(revocations[i], from, tally)
      if (verdict !== 'ok') {
        await this.overLimit(from, verdict, revocations.length - i)
        break
      }
    }
    if (tally.bad + tally.dropped > 0) {
      this.log(`revocations from ${from}: ${tally.stored} stored, ${tally.pending} kept in memory only, ${tally.dropped} dropped (no chain here they could apply to), ${tally.bad} invalid`)
    }
    return tally.stored
  }

  private async takeOne (bytes: Uint8Array, from: string, tally: Tally): Promise<LimitVerdict> {
    let rev: Revocation
    try {
      rev = decodeRevocation(bytes).revocation
    } catch {
      tally.bad++
      return this.limiter.spend(from)
    }
    const place = this.policy.place(rev)
    if (place === 'durable') {
      try {
        const fresh = await this.store.revoke(bytes)
        if (fresh !== undefined) { this.policy.noteStored(fresh); tally.stored++ }
        return 'ok'
      } catch (err) {
        tally.bad++
        if (err instanceof Error && err.name.startsWith('Revocation')) return this.limiter.spend(from)
        throw err
      }
    }
    const verdict = this.limiter.spend(from)
    if (verdict !== 'ok') return verdict
    if (place === 'drop') { tally.dropped++; return 'ok' }
    try {
      this.store.keepPending(verifyRevocation(bytes), bytes)
      tally.pending++
    } catch {
      tally.bad++
    }
    return 'ok'
  }

  private async overLimit (from: string, verdict: Exclude<LimitVerdict, 'ok'>, ignored: number): Promise<void> {
    if (verdict === 'throttled') {
      this.log(`revocations: peer ${from} throttled for ${this.limiter.throttleMs / 1000} s: over its budget of revocations that apply to no chain here; ${ignored} ignored`)
      return
    }
    this.log(`revocations: disconnecting peer ${from}: it kept sending revocations while throttled; ${ignored} ignored`)
    await this.disconnect(from).catch((err) => this.log(`revocations: disconnecting ${from}: ${errorMessage(err)}`))
  }
}
