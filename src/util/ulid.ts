import { randomFillSync } from 'node:crypto'

// Crockford base32, as ULID uses. Ids sort by time, and are strictly
// increasing within one process (monotonic), which the outbox relies on.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const TIME_LEN = 10
const RANDOM_LEN = 16
/** fresh random digits are taken from a pool of this many bytes, refilled once used up (one randomFillSync per 16 new milliseconds) */
const RANDOM_POOL = RANDOM_LEN * 16

/** the alphabet's character codes */
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0))

/**
 * The generator's state (one per process, as monotonicity is per process):
 * the time of the last id, the character codes of its encoded time prefix,
 * its random digits (0..31 each), and the pool fresh digits are drawn from.
 */
const state = {
  time: -1,
  prefix: new Uint8Array(TIME_LEN),
  digits: new Uint8Array(RANDOM_LEN),
  pool: new Uint8Array(RANDOM_POOL),
  used: RANDOM_POOL
}

/** The time prefix, spelled out (the reference of timeCodes, for ulidOf). */
function encodeTime (time: number): string {
  let out = ''
  let t = time
  for (let i = 0; i < TIME_LEN; i++) {
    out = ALPHABET[t % 32] + out
    t = Math.floor(t / 32)
  }
  return out
}

/** New random digits: each byte of the pool mod 32, as the reference takes them from randomBytes. */
function freshRandom (digits: Uint8Array): void {
  if (state.used + RANDOM_LEN > RANDOM_POOL) { randomFillSync(state.pool); state.used = 0 }
  for (let i = 0; i < RANDOM_LEN; i++) digits[i] = state.pool[state.used + i] % 32
  state.used += RANDOM_LEN
}

/** The digits plus one (in place); all 31s start over from fresh random digits. */
function increment (digits: Uint8Array): void {
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i] < 31) { digits[i]++; return }
    digits[i] = 0
  }
  freshRandom(digits)
}

/** The time prefix's character codes into out (encodeTime's characters). */
function timeCodes (time: number, out: Uint8Array): void {
  let t = time
  for (let i = TIME_LEN - 1; i >= 0; i--) {
    out[i] = CODES[t % 32]
    t = Math.floor(t / 32)
  }
}

/** The id of a prefix and digits as one flat string, made at once (no string per character, no rope to flatten when it is hashed) */
function idText (p: Uint8Array, d: Uint8Array): string {
  return String.fromCharCode(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9],
    CODES[d[0]], CODES[d[1]], CODES[d[2]], CODES[d[3]], CODES[d[4]], CODES[d[5]], CODES[d[6]], CODES[d[7]],
    CODES[d[8]], CODES[d[9]], CODES[d[10]], CODES[d[11]], CODES[d[12]], CODES[d[13]], CODES[d[14]], CODES[d[15]])
}

/** A monotonic ULID: 26 characters, lexicographically sortable by creation. */
export function ulid (now: number = Date.now()): string {
  if (now <= state.time) {
    increment(state.digits)
  } else {
    state.time = now
    timeCodes(now, state.prefix)
    freshRandom(state.digits)
  }
  return idText(state.prefix, state.digits)
}

/** The encoding of `time` and `digits` (0..31 each) as a ULID, spelled out (what ulid() writes; for its tests). */
export function ulidOf (time: number, digits: readonly number[]): string {
  return encodeTime(time) + digits.map((d) => ALPHABET[d]).join('')
}

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/

export function isUlid (value: string): boolean {
  return ULID_RE.test(value)
}
