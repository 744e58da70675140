// Content ids of cards, so a steady stream of records and gossip does not
// verify the same card twice (verified cards live in a BoundedIndex).

import { createHash } from 'node:crypto'

/** Content id of a card: SHA-256 of its canonical JSON (signatures included). */
export function contentHash (canonicalText: string): string {
  return createHash('sha256').update(canonicalText).digest('base64url')
}

export { BoundedIndex } from '../util/lru.js'
