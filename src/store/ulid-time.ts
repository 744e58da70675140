// The time part of a ULID (its first 10 characters, Crockford base32), without
// touching the monotonic generator's state in util/ulid.ts.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const TIME_LEN = 10

/** The 10-character ULID time prefix of `ms`; ids minted before `ms` sort below it. */
export function ulidTimePrefix (ms: number): string {
  let out = ''
  let t = Math.max(0, Math.floor(ms))
  for (let i = 0; i < TIME_LEN; i++) {
    out = ALPHABET[t % 32] + out
    t = Math.floor(t / 32)
  }
  return out
}

/** char code -> digit value (either case), -1 outside the alphabet */
const DIGIT = new Int8Array(128).fill(-1)
for (let d = 0; d < ALPHABET.length; d++) {
  DIGIT[ALPHABET.charCodeAt(d)] = d
  DIGIT[ALPHABET.toLowerCase().charCodeAt(d)] = d
}

/** The creation time (ms) encoded in a ULID, or NaN when it is not one. */
export function ulidTime (id: string): number {
  if (id.length < TIME_LEN) return NaN
  let t = 0
  for (let i = 0; i < TIME_LEN; i++) {
    const c = id.charCodeAt(i)
    const d = c < 128 ? DIGIT[c] : -1
    if (d < 0) return NaN
    t = t * 32 + d
  }
  return t
}
