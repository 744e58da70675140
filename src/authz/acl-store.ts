import { decodeToken, tokenId, verifyRevocation, type Revocation } from '../acl/index.js'
import { AclRecords } from '../store/acl-records.js'
import type { Committer, RawDb } from '../store/db.js'

/** A grant chain (encoded tokens, root first) and what it is about. */
export interface ChainRecord {
  id: string
  chain: Uint8Array[]
  iss: string
  aud: string
  sub: string
  exp: number
  signals?: readonly string[]
  zones?: readonly string[]
}

export function describeChain (chain: Uint8Array[]): ChainRecord {
  const last = chain[chain.length - 1]
  const t = decodeToken(last)
  const exp = Math.min(...chain.map((b) => decodeToken(b).payload.exp))
  return { id: tokenId(last), chain, iss: t.payload.iss, aud: t.payload.aud, sub: t.payload.sub, exp, signals: t.payload.pol.signals, zones: t.payload.pol.zones }
}

/**
 * The host's permission records: grant chains held by its nodes, chains its
 * nodes issued, revocations (append-only), and blocks.
 */
export class AclStore {
  private readonly held = new Map<string, ChainRecord[]>()
  private readonly issued = new Map<string, ChainRecord>()
  private readonly revocations = new Map<string, Revocation[]>()
  private readonly revocationBytes: Uint8Array[] = []
  private readonly blocks = new Set<string>()
  private gen = 0

  /**
   * Bumped on every change a cached decision could depend on: a chain held or
   * issued, a new revocation, a block or unblock, and (through `touch`) node
   * and profile changes made by the ACL service.
   */
  get generation (): number { return this.gen }

  touch (): void { this.gen++ }

  private readonly records: AclRecords

  constructor (db: RawDb, committer: Committer) {
    this.records = new AclRecords(db, committer)
  }

  async load (): Promise<void> {
    for await (const chain of this.records.heldChains()) this.rememberHeld(describeChain(chain))
    for await (const chain of this.records.issuedChains()) { const r = describeChain(chain); this.issued.set(r.id, r) }
    for await (const bytes of this.records.revocations()) this.rememberRevocation(bytes)
    for await (const key of this.records.blocks()) this.blocks.add(key)
    this.gen++
  }

  private rememberHeld (r: ChainRecord): void {
    const key = `${r.aud}|${r.sub}`
    const list = (this.held.get(key) ?? []).filter((x) => x.id !== r.id)
    list.push(r)
    this.held.set(key, list)
    this.gen++
  }

  private rememberRevocation (bytes: Uint8Array): Revocation {
    const rev = verifyRevocation(bytes)
    const list = this.revocations.get(rev.token) ?? []
    if (!list.some((x) => x.revoker === rev.revoker)) {
      list.push(rev)
      this.revocations.set(rev.token, list)
      this.revocationBytes.push(bytes)
      this.gen++
    }
    return rev
  }

  async hold (chain: Uint8Array[]): Promise<ChainRecord> {
    const r = describeChain(chain)
    this.rememberHeld(r)
    await this.records.putHeld(r, chain)
    return r
  }

  async issue (chain: Uint8Array[]): Promise<ChainRecord> {
    const r = describeChain(chain)
    this.issued.set(r.id, r)
    this.gen++
    await this.records.putIssued(r.id, chain)
    return r
  }

  /** Chains a sender holds for a target, newest expiry first. */
  heldFor (aud: string, sub: string): ChainRecord[] {
    return [...(this.held.get(`${aud}|${sub}`) ?? [])].sort((a, b) => b.exp - a.exp)
  }

  findHeld (id: string): ChainRecord | undefined {
    for (const list of this.held.values()) {
      const hit = list.find((r) => r.id === id)
      if (hit !== undefined) return hit
    }
    return undefined
  }

  allHeld (): ChainRecord[] { return [...this.held.values()].flat() }
  allIssued (): ChainRecord[] { return [...this.issued.values()] }
  findIssued (id: string): ChainRecord | undefined { return this.issued.get(id) }

  /** Store a verified revocation; returns it when it is new. */
  async revoke (bytes: Uint8Array): Promise<Revocation | undefined> {
    const before = this.revocationBytes.length
    const rev = this.rememberRevocation(bytes)
    if (this.revocationBytes.length === before) return undefined
    await this.records.putRevocation(rev.token, rev.revoker, bytes)
    return rev
  }

  revocationsOf (token: string): Revocation[] { return this.revocations.get(token) ?? [] }
  allRevocations (): Uint8Array[] { return [...this.revocationBytes] }

  isBlocked (node: string, sender: string): boolean { return this.blocks.has(`${node}!${sender}`) }

  async setBlock (node: string, sender: string, on: boolean): Promise<void> {
    const key = `${node}!${sender}`
    if (on) this.blocks.add(key)
    else this.blocks.delete(key)
    this.gen++
    await this.records.setBlock(node, sender, on)
  }

  blocksOf (node: string): string[] {
    return [...this.blocks].filter((k) => k.startsWith(node + '!')).map((k) => k.slice(node.length + 1))
  }
}
