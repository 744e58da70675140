import { decodeToken, tokenId, verifyRevocation, type Revocation } from '../acl/index.js'
import { AclRecords } from '../store/acl-records.js'
import type { Committer, RawDb } from '../store/db.js'
import { BoundedIndex } from '../util/lru.js'

/** Tokens with revocations held only in memory (not yet shown to matter here); each keeps at most PENDING_PER_TOKEN. */
export const PENDING_REVOCATION_TOKENS = 1024
const PENDING_PER_TOKEN = 4

/** A verified revocation held in memory only, with its signed bytes. */
export interface PendingRevocation { rev: Revocation, bytes: Uint8Array }

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
  /** durable revocations by `token!revoker`, with their signed bytes */
  private readonly revocationBytes = new Map<string, { rev: Revocation, bytes: Uint8Array }>()
  /** revocations kept only in memory, bounded (see authz/revocation-policy.ts): consulted by decisions, never stored or forwarded */
  private readonly pending = new BoundedIndex<PendingRevocation[]>(PENDING_REVOCATION_TOKENS)
  private chainGen = 0
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

  /** Bumped when a chain is held or issued (what revocation placement depends on). */
  get chainGeneration (): number { return this.chainGen }

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
    this.chainGen++
  }

  private rememberRevocation (bytes: Uint8Array): Revocation {
    const rev = verifyRevocation(bytes)
    const list = this.revocations.get(rev.token) ?? []
    if (!list.some((x) => x.revoker === rev.revoker)) {
      list.push(rev)
      this.revocations.set(rev.token, list)
      this.revocationBytes.set(`${rev.token}!${rev.revoker}`, { rev, bytes })
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
    this.chainGen++
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
    const before = this.revocationBytes.size
    const rev = this.rememberRevocation(bytes)
    if (this.revocationBytes.size === before) return undefined
    await this.records.putRevocation(rev.token, rev.revoker, bytes)
    return rev
  }

  /** Keep a verified revocation in memory only (bounded; the least recently used token is forgotten first). */
  keepPending (rev: Revocation, bytes: Uint8Array): void {
    const list = this.pending.get(rev.token) ?? []
    if (list.some((x) => x.rev.revoker === rev.revoker) || this.revocations.get(rev.token)?.some((x) => x.revoker === rev.revoker) === true) return
    this.pending.set(rev.token, [...list, { rev, bytes }].slice(-PENDING_PER_TOKEN))
    this.gen++
  }

  /** Pending revocations of one token (to promote once a chain with it is held or issued). */
  pendingOf (token: string): PendingRevocation[] { return this.pending.get(token) ?? [] }

  /** Drop a durable revocation from the store (it no longer matters here); it stays in memory as pending. */
  async demote (rev: Revocation): Promise<void> {
    const key = `${rev.token}!${rev.revoker}`
    const entry = this.revocationBytes.get(key)
    if (entry === undefined) return
    this.revocationBytes.delete(key)
    const rest = (this.revocations.get(rev.token) ?? []).filter((x) => x.revoker !== rev.revoker)
    if (rest.length > 0) this.revocations.set(rev.token, rest)
    else this.revocations.delete(rev.token)
    this.keepPending(rev, entry.bytes)
    await this.records.deleteRevocation(rev.token, rev.revoker)
  }

  /** Durable and pending revocations of a token. */
  revocationsOf (token: string): Revocation[] {
    const durable = this.revocations.get(token) ?? []
    const pending = this.pending.get(token)
    return pending === undefined ? durable : [...durable, ...pending.map((x) => x.rev)]
  }

  allRevocations (): Uint8Array[] { return [...this.revocationBytes.values()].map((x) => x.bytes) }
  durableRevocations (): Revocation[] { return [...this.revocationBytes.values()].map((x) => x.rev) }

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
