// Per-peer limits against strangers: a peer that goes over its budget is
// first throttled (what it sends is ignored for a while, without being
// verified), and a peer that keeps sending while throttled, or is struck
// again and again, is disconnected. The table of peers is bounded, so a
// flood of peer ids costs a fixed amount of memory.

import { FifoMap } from './fifo-map.js'
import { MINUTE } from './time.js'

export type LimitVerdict = 'ok' | 'throttled' | 'disconnect'

export interface PeerLimitInit {
  /** units a peer may spend per window (default 1,000) */
  budget?: number
  /** length of a budget window, ms (default 1 minute) */
  window?: number
  /** how long a struck peer is ignored, ms (default 1 minute) */
  throttleFor?: number
  /** strikes (without a quiet window between them) that disconnect a peer (default 2) */
  strikes?: number
  /** peers tracked at once; the oldest is forgotten first (default 4,096) */
  maxPeers?: number
}

interface PeerState { windowStart: number, used: number, throttledUntil: number, strikes: number, lastStrike: number }

export class PeerLimiter {
  private readonly peers: FifoMap<string, PeerState>
  private readonly budget: number
  private readonly window: number
  private readonly throttleFor: number
  private readonly maxStrikes: number

  constructor (init: PeerLimitInit = {}) {
    this.budget = init.budget ?? 1000
    this.window = init.window ?? MINUTE
    this.throttleFor = init.throttleFor ?? MINUTE
    this.maxStrikes = init.strikes ?? 2
    this.peers = new FifoMap(init.maxPeers ?? 4096)
  }

  private state (peer: string, now: number): PeerState {
    let s = this.peers.get(peer)
    if (s === undefined) {
      s = { windowStart: now, used: 0, throttledUntil: 0, strikes: 0, lastStrike: 0 }
      this.peers.set(peer, s)
    }
    if (now - s.windowStart >= this.window) { s.windowStart = now; s.used = 0 }
    // a quiet stretch (throttle over, then a whole window without a strike) forgives earlier strikes
    if (s.strikes > 0 && now - s.lastStrike >= this.throttleFor + this.window) s.strikes = 0
    return s
  }

  isThrottled (peer: string, now: number = Date.now()): boolean {
    const s = this.peers.get(peer)
    return s !== undefined && s.throttledUntil > now
  }

  /** Count `units` against the peer's budget; over it (or sending while throttled) is a strike. */
  spend (peer: string, units = 1, now: number = Date.now()): LimitVerdict {
    const s = this.state(peer, now)
    if (s.throttledUntil > now) return this.strike(peer, now)
    s.used += units
    return s.used > this.budget ? this.strike(peer, now) : 'ok'
  }

  /** A limit was exceeded: throttle the peer, or say it is to be disconnected. */
  strike (peer: string, now: number = Date.now()): Exclude<LimitVerdict, 'ok'> {
    const s = this.state(peer, now)
    s.strikes++
    s.lastStrike = now
    s.throttledUntil = now + this.throttleFor
    return s.strikes >= this.maxStrikes ? 'disconnect' : 'throttled'
  }

  get throttleMs (): number { return this.throttleFor }
}
