// What a stranger floods a host with: real signed junk cards and revocations.
// Keys are made with the DER export (issue 17 item 9: the JWK export can hang
// Node 20 in long key loops) and signed with node:crypto directly.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import * as lp from 'it-length-prefixed'
import * as cbor from '@ipld/dag-cbor'
import type { Libp2p, PeerId } from '@libp2p/interface'
import { encodeRevocation, issueRevocation } from '../../src/acl/index.js'
import { buildCard, signCard, type SignedAgentCard } from '../../src/discovery/card.js'
import { CARDS_PROTOCOL } from '../../src/discovery/cards-protocol.js'
import { GRANTS_PROTOCOL } from '../../src/authz/grant-exchange.js'
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

/** A token id nobody issued (the CID string form the ACL expects). */
export function madeUpTokenId (): string {
  return 'b' + randomBytes(36).toString('hex').replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)]).replace(/[^a-z2-7]/g, 'q')
}

/** `n` signed revocations of made-up tokens, by `signers` throwaway keys. */
export function junkRevocations (n: number, signers = 100): Uint8Array[] {
  const keys = Array.from({ length: signers }, () => junkKey())
  return Array.from({ length: n }, (_, i) => encodeRevocation(issueRevocation(keys[i % signers], madeUpTokenId())))
}

/** One card-exchange message to a peer, as a host speaking the protocol would; resolves with the reply's card count. */
export async function pushCards (libp2p: Libp2p, peer: PeerId, cards: unknown[]): Promise<number> {
  const signal = AbortSignal.timeout(30_000)
  const stream = await libp2p.dialProtocol(peer, CARDS_PROTOCOL, { signal })
  try {
    await stream.sink(lp.encode([new TextEncoder().encode(JSON.stringify({ cards }))]))
    for await (const chunk of lp.decode(stream.source, { maxDataLength: 8 * 1024 * 1024 })) {
      return (JSON.parse(new TextDecoder().decode(chunk.subarray())) as { cards: unknown[] }).cards.length
    }
    return -1
  } finally {
    await stream.close().catch(() => {})
  }
}

/** One grant-bundle message (revocations only); resolves once the receiver has closed its side (it took the bundle). */
export async function pushRevocations (libp2p: Libp2p, peer: PeerId, revocations: Uint8Array[]): Promise<void> {
  const signal = AbortSignal.timeout(60_000)
  const stream = await libp2p.dialProtocol(peer, GRANTS_PROTOCOL, { signal })
  await stream.sink(lp.encode([cbor.encode({ chains: [], revocations })]))
  for await (const _ of stream.source) { if (signal.aborted) break }
}
