// The reply line of a call: `JSON.stringify({ id, result }) + '\n'` (the
// reference). A result that is a flat object of up to FLAT_KEYS string values
// that need no escaping (every `send`'s answer: {id, state, receipt}) is
// written as a template instead: JSON.stringify of the nested object cost a
// T2 sender ~0.4 µs more per reply (test/control/reply-line.test.ts: the same
// line for every result).

/** the most keys of a result written as a template */
const FLAT_KEYS = 4

/** The reference: the reply line as JSON.stringify writes it. */
export function replyLineReference (id: number, result: unknown): string {
  return JSON.stringify({ id, result }) + '\n'
}

/** Whether JSON.stringify writes this string as its characters between quotes (nothing escaped). */
function plain (s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false
  }
  return true
}

/** `"k":"v"` pairs of a plain object's own enumerable string values, or undefined when it is anything else. */
function flatPairs (result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null || Object.getPrototypeOf(result) !== Object.prototype) return undefined
  const o = result as Record<string, unknown>
  let out = ''
  let n = 0
  for (const k in o) {
    if (++n > FLAT_KEYS || !Object.hasOwn(o, k)) return undefined
    const v = o[k]
    if (typeof v !== 'string' || !plain(k) || !plain(v)) return undefined
    out += n === 1 ? `"${k}":"${v}"` : `,"${k}":"${v}"`
  }
  return n === 0 ? undefined : out
}

/** replyLineReference(id, result), with a flat result of plain strings written as a template. */
export function replyLine (id: number, result: unknown): string {
  if (!Number.isFinite(id)) return replyLineReference(id, result)
  const pairs = flatPairs(result)
  return pairs === undefined ? replyLineReference(id, result) : `{"id":${id},"result":{${pairs}}}\n`
}
