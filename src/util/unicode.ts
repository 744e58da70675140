// Text that arrives from a third party (an A2A agent's answer, an ACP
// agent's output) and becomes packet strings without a person to fix it: a
// lone surrogate (half of a UTF-16 pair; JSON can carry one, UTF-8 cannot)
// would make the packet refused (INVALID_PACKET), and the answer lost. Such
// text is made well formed at the boundary instead, each lone surrogate
// becoming U+FFFD, the mark of undecodable text. What a caller sends itself is
// refused by name, never changed (packet/json-value.ts).

type ToWellFormed = (this: string) => string
/** String.prototype.toWellFormed (ES2024; Node 20 has it) */
const toWellFormed: ToWellFormed = (String.prototype as unknown as { toWellFormed?: ToWellFormed }).toWellFormed ??
  function (this: string) { return this.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD') }

/** `s` with every lone surrogate replaced by U+FFFD (the same string when it has none). */
export function wellFormed (s: string): string {
  return toWellFormed.call(s)
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
