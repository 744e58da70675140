// A bounded cache of tokens whose signature has been verified, by token id.
// Ids are content ids, so a hit means these exact bytes verified before.
// Only the signature (and decoding) is cached: time and revocation checks
// run on every use.
import type { Token } from './token.js'

export const DEFAULT_TOKEN_CACHE_SIZE = 4096

export class TokenCache {
  private readonly entries = new Map<string, Token>()
  readonly max: number

  constructor (max: number = DEFAULT_TOKEN_CACHE_SIZE) {
    this.max = Math.max(1, Math.floor(max))
  }

  /** The verified token with this id, refreshed as most recently used. */
  get (id: string): Token | undefined {
    const token = this.entries.get(id)
    if (token !== undefined) {
      this.entries.delete(id)
      this.entries.set(id, token)
    }
    return token
  }

  /** Remember a verified token, evicting the least recently used past `max`. */
  set (id: string, token: Token): void {
    this.entries.delete(id)
    while (this.entries.size >= this.max) this.evictOldest()
    this.entries.set(id, token)
  }

  get size (): number {
    return this.entries.size
  }

  clear (): void {
    this.entries.clear()
  }

  private evictOldest (): void {
    const oldest = this.entries.keys().next()
    if (oldest.done === true) return
    this.entries.delete(oldest.value)
  }
}

/** The process-wide cache used when a caller does not pass its own. */
export const defaultTokenCache = new TokenCache()
