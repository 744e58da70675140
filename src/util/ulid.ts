import { randomFillSync } from 'node:crypto'

// Crockford base32, as ULID uses. Ids sort by time, and are strictly
// increasing within one process (monotonic), which the outbox relies on.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const TIME_LEN = 10
const RANDOM_LEN = 16
/** fresh random digits are taken from a pool of this many bytes, refilled once used up (one randomFillSync per 16 new milliseconds) */
const RANDOM_POOL = RANDOM_LEN * 16

/**
 * The generator's state (one per process, as monotonicity is per process):
 * the time of the last id, its encoded time prefix, its random digits (0..31
 * each), and the pool fresh digits are drawn from.
 */
const state = {
  time: -1,
  prefix: '',
  digits: new Uint8Array(RANDOM_LEN),
  pool: new Uint8Array(RANDOM_POOL),
  used: RANDOM_POOL
}

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

function digitsText (digits: Uint8Array): string {
  let s = ''
  for (let i = 0; i < digits.length; i++) s += ALPHABET[digits[i]]
  return s
}

/** A monotonic ULID: 26 characters, lexicographically sortable by creation. */
export function ulid (now: number = Date.now()): string {
  if (now <= state.time) {
    increment(state.digits)
  } else {
    state.time = now
    state.prefix = encodeTime(now)
    freshRandom(state.digits)
  }
  return state.prefix + digitsText(state.digits)
}

/** The encoding of `time` and `digits` (0..31 each) as a ULID, spelled out (what ulid() writes; for its tests). */
export function ulidOf (time: number, digits: readonly number[]): string {
  return encodeTime(time) + digits.map((d) => ALPHABET[d]).join('')
}

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/

export function isUlid (value: string): boolean {
  return ULID_RE.test(value)
}
