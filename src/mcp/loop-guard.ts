import { LoopGuardError } from './errors.js'

interface PeerState {
  /** an inbound packet from this peer has not been answered yet */
  pending: boolean
  /** the conversation of the newest inbound packet from this peer */
  lastConversation: string
}

export interface LoopGuardInit {
  /** automatic replies allowed per peer/conversation pair inside the window */
  limit: number
  /** window, ms */
  window: number
  now?: () => number
}

/**
 * Counts automatic replies: an outgoing packet to a peer whose last inbound
 * packet has not been answered yet. Past `limit` such replies to one
 * peer/conversation pair inside `window`, `check` throws LoopGuardError.
 */
export class LoopGuard {
  private readonly peers = new Map<string, PeerState>()
  private readonly replies = new Map<string, number[]>()
  private readonly now: () => number

  constructor (private readonly init: LoopGuardInit) {
    this.now = init.now ?? Date.now
  }

  /** A packet arrived from `peer` in `conversation`. */
  inbound (peer: string, conversation: string): void {
    this.peers.set(peer, { pending: true, lastConversation: conversation })
  }

  /** Throws when an outgoing packet to `peer` now would be one automatic reply too many. */
  check (peer: string, conversation: string | undefined): void {
    const state = this.peers.get(peer)
    if (state?.pending !== true) return
    const key = this.key(peer, conversation ?? state.lastConversation)
    const recent = this.recent(key)
    if (recent.length >= this.init.limit) {
      const resumeIn = Math.ceil((recent[0] + this.init.window - this.now()) / 1000)
      throw new LoopGuardError(
        `loop guard: this session already sent ${recent.length} automatic replies to this peer in this conversation ` +
        `within ${Math.round(this.init.window / 1000)} s (limit ${this.init.limit}). Two agents may be replying to each other ` +
        `in a loop. Stop and ask the human user before sending more; the guard resets in about ${resumeIn} s ` +
        '(the limit is set with --loop-limit / --loop-window or mcp.yaml).'
      )
    }
  }

  /** Record an outgoing packet that was sent. */
  sent (peer: string, conversation: string | undefined): void {
    const state = this.peers.get(peer)
    if (state?.pending !== true) return
    const key = this.key(peer, conversation ?? state.lastConversation)
    const recent = this.recent(key)
    recent.push(this.now())
    this.replies.set(key, recent)
    state.pending = false
  }

  private key (peer: string, conversation: string): string {
    return `${peer}\n${conversation}`
  }

  private recent (key: string): number[] {
    const since = this.now() - this.init.window
    const list = (this.replies.get(key) ?? []).filter((t) => t > since)
    if (list.length === 0) this.replies.delete(key)
    else this.replies.set(key, list)
    return list
  }
}
