import { randomBytes } from 'node:crypto'

// Crockford base32, as ULID uses. Ids sort by time, and are strictly
// increasing within one process (monotonic), which the outbox relies on.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const TIME_LEN = 10
const RANDOM_LEN = 16

let lastTime = -1
let lastRandom: number[] = []

function encodeTime (time: number): string {
  let out = ''
  let t = time
  for (let i = 0; i < TIME_LEN; i++) {
    out = ALPHABET[t % 32] + out
    t = Math.floor(t / 32)
  }
  return out
}

function freshRandom (): number[] {
  const bytes = randomBytes(RANDOM_LEN)
  return Array.from(bytes, (b) => b % 32)
}

function increment (digits: number[]): number[] {
  const next = digits.slice()
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++
      return next
    }
    next[i] = 0
  }
  return freshRandom()
}

/** A monotonic ULID: 26 characters, lexicographically sortable by creation. */
export function ulid (now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom)
  } else {
    lastTime = now
    lastRandom = freshRandom()
  }
  return encodeTime(lastTime) + lastRandom.map((d) => ALPHABET[d]).join('')
}

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/

export function isUlid (value: string): boolean {
  return ULID_RE.test(value)
}
