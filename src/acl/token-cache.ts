// A bounded cache of tokens whose signature has been verified, by token id.
// Ids are content ids, so a hit means these exact bytes verified before.
// Only the signature (and decoding) is cached: time and revocation checks
// run on every use.
import { BoundedIndex } from '../util/lru.js'
import type { Token } from './token.js'

export const DEFAULT_TOKEN_CACHE_SIZE = 4096

export class TokenCache extends BoundedIndex<Token> {
  readonly max: number

  constructor (max: number = DEFAULT_TOKEN_CACHE_SIZE) {
    const limit = Math.max(1, Math.floor(max))
    super(limit)
    this.max = limit
  }
}

/** The process-wide cache used when a caller does not pass its own. */
export const defaultTokenCache = new TokenCache()
