// Junk keys and self-signed junk cards (what test/utils/junk.ts floods a host with), in
// a module of their own so a JunkPool worker (junk-pool.ts) loads only what makes them.
// Keys are made with the DER export (issue 17 item 9: the JWK export can hang
// Node 20 in long key loops) and signed with node:crypto directly.
import { generateKeyPairSync, sign } from 'node:crypto'
import { buildCard, signCard, type SignedAgentCard } from '../../src/discovery/card.js'
import { nodeIdFromPublicKey, type NodeKey } from '../../src/identity/node-key.js'
import { DAY } from '../../src/util/time.js'

export function junkKey (): NodeKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12))
  return { id: nodeIdFromPublicKey(raw), publicKey: raw, sign: (d) => new Uint8Array(sign(null, d, privateKey)), exportPrivate: () => new Uint8Array() }
}

/** `n` self-signed cards of made-up nodes served by `hostPeerId`, valid a year. */
export function junkCards (n: number, hostPeerId: string, first = 0): SignedAgentCard[] {
  const now = Date.now()
  return Array.from({ length: n }, (_, i) => {
    const key = junkKey()
    return signCard(buildCard({ nodeId: key.id, name: `junk-${first + i}`, kind: 'external', hostPeerId, hostAddrs: ['/ip4/127.0.0.1/tcp/9'], issuedAt: now, expiresAt: now + 365 * DAY }), key)
  })
}

/** The body of one card-exchange message carrying `cards`. */
export function cardsMessage (cards: unknown[]): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ cards }))
}
