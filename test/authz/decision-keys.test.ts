// KeyMemo (a decision cache's key kept while its parts repeat) against keyOf
// and the template the checks used: the same string for every sequence of
// parts, repeated, changed one at a time, with and without the fifth part.
import { strict as assert } from 'node:assert'
import { KeyMemo, keyOf } from '../../src/authz/decision-cache.js'

describe('authz - decision cache keys (KeyMemo)', () => {
  it('gives the key of its parts, whatever came before', () => {
    const pool = ['a', 'b', '', 'a|b', '|', 'MESSAGE', 'project', 'x'.repeat(60), 'é', 'a'.concat('b')]
    let seed = 3
    const pick = (): string => { seed = (seed * 1103515245 + 12345) % 2147483648; return pool[Math.floor(seed / 65536) % pool.length] }
    const memo = new KeyMemo()
    let parts: [string, string, string, string, string | undefined] = ['a', 'b', 'MESSAGE', 'project', undefined]
    for (let i = 0; i < 20_000; i++) {
      const change = Math.floor(seed / 65536) % 7
      if (change < 5) parts = parts.map((p, k) => k === change ? (k === 4 && p !== undefined && change === 4 && i % 3 === 0 ? undefined : pick()) : p) as typeof parts
      const [a, b, c, d, e] = parts
      const key = memo.of(a, b, c, d, e)
      assert.equal(key, keyOf(a, b, c, d, e))
      assert.equal(key, e === undefined ? `${a}|${b}|${c}|${d}` : `${a}|${b}|${c}|${d}|${e}`)
      pick()
    }
  })

  it('tells a missing fifth part from an empty one', () => {
    const memo = new KeyMemo()
    assert.equal(memo.of('a', 'b', 'c', 'd'), 'a|b|c|d')
    assert.equal(memo.of('a', 'b', 'c', 'd', ''), 'a|b|c|d|')
    assert.equal(memo.of('a', 'b', 'c', 'd'), 'a|b|c|d')
  })
})
