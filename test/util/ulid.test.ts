// The pooled ULID generator: ids of the documented form, strictly increasing
// within the process (the outbox's key order relies on it), the time prefix
// the reference spelling gives, and +1 in base 32 within one millisecond.
import { strict as assert } from 'node:assert'
import { isUlid, ulid, ulidOf } from '../../src/util/ulid.js'

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const digitsOf = (id: string): number[] => Array.from(id.slice(10), (c) => ALPHABET.indexOf(c))
const timeOf = (id: string): number => Array.from(id.slice(0, 10)).reduce((t, c) => t * 32 + ALPHABET.indexOf(c), 0)
// real clock times only: the generator's state is the process's, other tests mint ids after these (and some before, up to seconds ahead of the clock)

describe('util - ulid', () => {
  it('gives valid ids, strictly increasing, many per millisecond and across milliseconds, also when the clock steps back', () => {
    let last = ''
    for (let i = 0; i < 5000; i++) {
      const id = i % 100 === 7 ? ulid(Date.now() - 5) : ulid()
      assert.ok(isUlid(id), id)
      assert.ok(id > last, `${id} after ${last}`)
      last = id
    }
  })

  it('writes the time prefix and random digits as the reference spelling does, and adds one within a millisecond', () => {
    const first = ulid()
    const t = timeOf(first)
    assert.equal(first, ulidOf(t, digitsOf(first)))
    let prev = first
    for (let i = 0; i < 300; i++) {
      const next = ulid(t)
      const d = digitsOf(prev)
      let k = d.length - 1
      while (d[k] === 31) { d[k] = 0; k-- }
      d[k]++
      assert.equal(next, ulidOf(t, d))
      prev = next
    }
  })

  it('takes fresh random digits for each new millisecond, past the pool refills', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 100; i++) {
      const last = timeOf(ulid())
      // the next millisecond (at most 100 ms past the clock or the state, not seconds of waiting)
      const id = ulid(Math.max(Date.now(), last + 1))
      assert.ok(timeOf(id) > last)
      seen.add(id.slice(10))
    }
    assert.ok(seen.size >= 99, `${seen.size} distinct random parts of 100`)
  })
})
