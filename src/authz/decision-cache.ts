// A short-lived memo of "allow" decisions, so a steady stream between the
// same two nodes with the same proof runs the full decision once.
//
// A cached allow is used only when every fact the decision read is unchanged:
// - the ACL store's generation (bumped on every grant held or issued, every
//   new revocation, every block and unblock, every profile or node change
//   made through the ACL service) — so a revocation or block takes effect on
//   the very next packet;
// - the local node records it read (target, sender, every node whose
//   ancestors were asked for), by object identity: the node store replaces
//   the object on every update, so a profile or lineage change made anywhere
//   misses;
// - the proof bytes (lineage path and grant chain), compared byte for byte;
// - the time: an entry lives at most `ttl` ms, never past the earliest
//   expiry in its grant chain, and never when the clock moved backwards.
// Denials are never cached.
import type { LocalNode } from '../store/nodes.js'

export const DECISION_TTL_MS = 1000
export const DECISION_CACHE_MAX = 4096

/** The local node records a decision read: id → the object seen (undefined: not local). */
export type NodeDeps = Map<string, LocalNode | undefined>

export interface CachedAllow<T> {
  readonly gen: number
  readonly at: number
  readonly until: number
  readonly deps: NodeDeps
  readonly proof: readonly (readonly Uint8Array[] | undefined)[]
  readonly value: T
}

function sameBytes (a: Uint8Array, b: Uint8Array): boolean {
  return a === b || (a.byteLength === b.byteLength && Buffer.compare(a, b) === 0)
}

function sameList (a: readonly Uint8Array[] | undefined, b: readonly Uint8Array[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b || (a ?? b)?.length === 0
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!sameBytes(a[i], b[i])) return false
  return true
}

export class DecisionCache<T> {
  private readonly entries = new Map<string, CachedAllow<T>>()
  /** the key of the last decision asked for, kept while its parts repeat (each cache its own: no module-level state) */
  readonly keys = new KeyMemo()

  constructor (
    private readonly lookupNode: (id: string) => LocalNode | undefined,
    private readonly ttl = DECISION_TTL_MS,
    private readonly max = DECISION_CACHE_MAX
  ) {}

  /** The cached value for `key` when every fact it was decided from still holds. */
  get (key: string, gen: number, now: number, proof: ReadonlyArray<readonly Uint8Array[] | undefined>): T | undefined {
    const e = this.entries.get(key)
    if (e === undefined) return undefined
    if (e.gen !== gen || now < e.at || now >= e.until || !this.depsHold(e.deps) || !this.sameProof(e.proof, proof)) {
      this.entries.delete(key)
      return undefined
    }
    return e.value
  }

  /** Remember an allow decided at `now` from `deps`; `expires` is the earliest token expiry (exclusive), if any. */
  set (key: string, entry: { gen: number, now: number, expires?: number, deps: NodeDeps, proof: ReadonlyArray<readonly Uint8Array[] | undefined>, value: T }): void {
    const until = Math.min(entry.now + this.ttl, entry.expires ?? Infinity)
    if (until <= entry.now) return
    if (this.entries.size >= this.max) this.entries.clear()
    this.entries.set(key, { gen: entry.gen, at: entry.now, until, deps: entry.deps, proof: [...entry.proof], value: entry.value })
  }

  clear (): void { this.entries.clear() }

  get size (): number { return this.entries.size }

  private depsHold (deps: NodeDeps): boolean {
    for (const [id, node] of deps) if (this.lookupNode(id) !== node) return false
    return true
  }

  private sameProof (a: ReadonlyArray<readonly Uint8Array[] | undefined>, b: ReadonlyArray<readonly Uint8Array[] | undefined>): boolean {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameList(a[i], b[i])) return false
    return true
  }
}

/** A node lookup that records what it returned, for `NodeDeps`. */
export function recordingLookup (lookup: (id: string) => LocalNode | undefined, deps: NodeDeps): (id: string) => LocalNode | undefined {
  return (id) => {
    const node = lookup(id)
    if (!deps.has(id)) deps.set(id, node)
    return node
  }
}

/**
 * A decision cache's key, `a|b|c|d[|e]`, kept from the call before while its
 * parts are the same strings: a stream between two nodes asks with the same
 * parts packet after packet, and a key built anew (a rope of nine pieces)
 * is flattened and hashed again by every lookup (measured: ~0.9 µs per
 * packet for the template and its Map.get, ~0.01 reused). `keyOf` below is
 * its reference (test/authz/decision-keys.test.ts).
 */
export class KeyMemo {
  private parts: Array<string | undefined> = []
  private key = ''

  of (a: string, b: string, c: string, d: string, e?: string): string {
    const p = this.parts
    if (p.length > 0 && p[0] === a && p[1] === b && p[2] === c && p[3] === d && p[4] === e) return this.key
    this.parts = [a, b, c, d, e]
    this.key = keyOf(a, b, c, d, e)
    return this.key
  }
}

/** The key of these parts: four joined by `|`, and the fifth after another `|` when given. */
export function keyOf (a: string, b: string, c: string, d: string, e?: string): string {
  return e === undefined ? `${a}|${b}|${c}|${d}` : `${a}|${b}|${c}|${d}|${e}`
}
