// What a stranger floods a host with: real signed junk cards and revocations.
// The keys and cards are made in junk-cards.ts.
import { randomBytes } from 'node:crypto'
import * as lp from 'it-length-prefixed'
import * as cbor from '@ipld/dag-cbor'
import type { Libp2p, PeerId } from '@libp2p/interface'
import { encodeRevocation, issueRevocation } from '../../src/acl/index.js'
import { CARDS_PROTOCOL } from '../../src/discovery/cards-protocol.js'
import { GRANTS_PROTOCOL } from '../../src/authz/grant-exchange.js'
import { cardsMessage, junkKey } from './junk-cards.js'

export { cardsMessage, junkCards, junkKey } from './junk-cards.js'

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
export async function pushCards (libp2p: Libp2p, peer: PeerId, cards: unknown[] | Uint8Array): Promise<number> {
  const signal = AbortSignal.timeout(30_000)
  const stream = await libp2p.dialProtocol(peer, CARDS_PROTOCOL, { signal })
  try {
    await stream.sink(lp.encode([cards instanceof Uint8Array ? cards : cardsMessage(cards)]))
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
