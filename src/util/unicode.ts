// Unicode text checks and repairs for packet strings. A lone surrogate (half
// of a UTF-16 pair) has no UTF-8 form, and DAG-CBOR would store U+FFFD in its
// place: what a caller sends itself is refused by name (packet/json-value.ts),
// while text from a third party that becomes packet strings without a person
// to fix it (an A2A agent's answer, an ACP agent's output, Claude Code's
// permission requests) is made well formed at the boundary instead.
//
// String#isWellFormed / #toWellFormed are ES2024; every Node amesh supports
// (>= 20.19) has them, the ES2022 typings do not.
interface WellFormedString { isWellFormed: () => boolean, toWellFormed: () => string }
const asWellFormed = (s: string): WellFormedString => s as unknown as WellFormedString

/** Whether `s` holds no lone surrogate (constant time for a one-byte string). */
export function isWellFormedText (s: string): boolean {
  return asWellFormed(s).isWellFormed()
}

/** `s` with every lone surrogate replaced by U+FFFD (the same string when it has none). */
export function wellFormed (s: string): string {
  return asWellFormed(s).toWellFormed()
}

/** A JSON-like value with every string in it (keys too) made well formed; other values as they are. */
export function wellFormedDeep<T> (v: T): T {
  if (typeof v === 'string') return wellFormed(v) as T
  if (Array.isArray(v)) return v.map((x: unknown) => wellFormedDeep(x)) as T
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) out[wellFormed(k)] = wellFormedDeep(x)
  return out as T
}

/** The first `n` UTF-16 units of `s`, one fewer when the cut would fall inside a surrogate pair. */
export function cutText (s: string, n: number): string {
  if (s.length <= n) return s
  const c = s.charCodeAt(n - 1)
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n)
}
