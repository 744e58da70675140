// Who may revoke, and which revocations a host keeps. A revocation matters
// here only when its signer is an issuer in a chain this host holds or issued
// (the issuer of the revoked link or of one above it, or a node that speaks
// for the root issuer): those are stored and handed on. A revocation of a
// token this host has not seen, signed by a node that appears in one of its
// chains (it may have delegated further), is stored too, up to a few per
// signer. Anything else — made-up tokens, signers in no chain here — is kept
// only in a small in-memory cache (so it still counts if the chain turns up),
// never stored, never forwarded. A signer in a chain that is not an issuer of
// the revoked link or above is dropped: that statement can never apply.

import { decodeToken, revokerCounts, tokenId, type Revocation } from '../acl/index.js'
import { defineError } from '../util/errors.js'
import type { AclStore, ChainRecord } from './acl-store.js'

/** `revoke` by a node that is not an issuer in the token's chain. */
export const NotIssuerError = defineError('NotIssuerError', 'NOT_ISSUER')

/** Revocations of unseen tokens stored per signer that appears in a chain here. */
export const MAX_OPEN_PER_REVOKER = 64

export type SpeaksFor = (issuerId: string, subId: string) => boolean
export type Placement = 'durable' | 'pending' | 'drop'

/** Where a token id sits in the chains of this host: the issuers of its link and those above, per chain. */
interface ChainIndex { links: Map<string, string[][]>, principals: Set<string> }

function indexChains (records: readonly ChainRecord[]): ChainIndex {
  const links = new Map<string, string[][]>()
  const principals = new Set<string>()
  for (const r of records) {
    const issuers: string[] = []
    for (const bytes of r.chain) {
      const p = decodeToken(bytes).payload
      issuers.push(p.iss)
      principals.add(p.iss)
      principals.add(p.aud)
      const id = tokenId(bytes)
      links.set(id, [...(links.get(id) ?? []), [...issuers]])
    }
  }
  return { links, principals }
}

/** The issuers (root first) of `token`'s link and the links above it, in the first chain holding it. */
function issuersOf (index: ChainIndex, token: string): string[][] | undefined {
  return index.links.get(token)
}

export class RevocationPolicy {
  private index: ChainIndex = { links: new Map(), principals: new Set() }
  private indexedAt = -1
  /** revoker -> durable revocations of tokens not in any chain here */
  private readonly open = new Map<string, number>()

  constructor (private readonly store: AclStore, private readonly speaksFor: () => SpeaksFor) {}

  private chains (): ChainIndex {
    if (this.indexedAt !== this.store.chainGeneration) {
      this.index = indexChains([...this.store.allHeld(), ...this.store.allIssued()])
      this.indexedAt = this.store.chainGeneration
    }
    return this.index
  }

  /** Where a (decoded, not yet verified) revocation belongs. */
  place (rev: Pick<Revocation, 'revoker' | 'token'>): Placement {
    const index = this.chains()
    const places = issuersOf(index, rev.token)
    if (places !== undefined) return places.some((issuers) => revokerCounts(rev.revoker, issuers, this.speaksFor())) ? 'durable' : 'drop'
    if (index.principals.has(rev.revoker) && (this.open.get(rev.revoker) ?? 0) < MAX_OPEN_PER_REVOKER) return 'durable'
    return 'pending'
  }

  /** Count a durable revocation of a token not in any chain here against its signer. */
  noteStored (rev: Revocation): void {
    if (issuersOf(this.chains(), rev.token) === undefined) this.open.set(rev.revoker, (this.open.get(rev.revoker) ?? 0) + 1)
  }

  /** True when a revocation by one of its issuers applies to some link of `chain` (durable or pending). */
  chainRevoked (chain: readonly Uint8Array[]): boolean {
    const issuers: string[] = []
    return chain.some((bytes) => {
      issuers.push(decodeToken(bytes).payload.iss)
      return this.store.revocationsOf(tokenId(bytes)).some((r) => revokerCounts(r.revoker, issuers, this.speaksFor()))
    })
  }

  /** True when the token is a link of a chain this host holds or issued. */
  knows (token: string): boolean {
    return issuersOf(this.chains(), token) !== undefined
  }

  /** Throws NotIssuerError unless `revoker` may revoke `token` in a chain this host holds or issued. */
  checkIssuer (revoker: string, revokerName: string, token: string): void {
    const places = issuersOf(this.chains(), token) ?? []
    if (places.some((issuers) => revokerCounts(revoker, issuers, this.speaksFor()))) return
    throw new NotIssuerError(`NOT_ISSUER: ${revokerName} is not an issuer in the chain of token ${token}; only ${[...new Set(places.flat())].join(', ')} (or a node that speaks for the root issuer) may revoke it`)
  }

  /** Revocations that now have a chain here (a chain was just held or issued): to store. */
  promotable (chain: readonly Uint8Array[]): Uint8Array[] {
    return chain.flatMap((b) => this.store.pendingOf(tokenId(b))).filter((p) => this.place(p.rev) === 'durable').map((p) => p.bytes)
  }
}
