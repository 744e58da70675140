// wellFormed / wellFormedDeep: every lone surrogate becomes U+FFFD, pairs and
// other text stay as they are, in strings, keys and nested values alike.
import { strict as assert } from 'node:assert'
import { cutText, isWellFormedText, wellFormed, wellFormedDeep } from '../../src/util/unicode.js'

describe('util - well-formed text for what third parties hand over', () => {
  it('replaces each lone surrogate with U+FFFD and keeps pairs, one-byte and other text', () => {
    const cases: Array<[string, string]> = [
      ['', ''], ['plain', 'plain'], ['é中😀𝄞', 'é中😀𝄞'], ['a\ud800b', 'a\ufffdb'], ['\udc00', '\ufffd'], ['end \ud83d', 'end \ufffd'],
      ['\ude00\ud83d', '\ufffd\ufffd'], ['\ud83d\ud83d\ude00', '\ufffd😀'], ['x'.repeat(5000) + '\udbff', 'x'.repeat(5000) + '\ufffd']
    ]
    for (const [s, want] of cases) assert.equal(wellFormed(s), want, JSON.stringify(s).slice(0, 30))
  })

  it('walks arrays and objects (keys too), leaving numbers, booleans, null and bytes alone, and the input unchanged', () => {
    const bytes = new Uint8Array([1, 2])
    const v = { text: 'a\ud800', context: { ['k\udc00']: ['ok', '\udbff', 1, true, null], n: 2.5 }, b: bytes }
    const copy = structuredClone(v)
    assert.deepStrictEqual(wellFormedDeep(v), { text: 'a\ufffd', context: { 'k\ufffd': ['ok', '\ufffd', 1, true, null], n: 2.5 }, b: bytes })
    assert.deepStrictEqual(v, copy)
    assert.equal(wellFormedDeep(undefined), undefined)
  })

  it('isWellFormedText tells lone surrogates from pairs', () => {
    for (const ok of ['', 'x', '😀', 'é中𝄞']) assert.equal(isWellFormedText(ok), true)
    for (const bad of ['\ud800', 'a\udc00', '😀\ud83d', '\ude00\ud83d']) assert.equal(isWellFormedText(bad), false)
  })

  it('cutText keeps n units, one fewer where the cut would split a pair, and never leaves half of one', () => {
    assert.equal(cutText('abc', 5), 'abc')
    assert.equal(cutText('abcdef', 3), 'abc')
    assert.equal(cutText('ab😀cd', 3), 'ab')
    assert.equal(cutText('ab😀cd', 4), 'ab😀')
    for (let n = 1; n < 12; n++) assert.equal(isWellFormedText(cutText('a😀b𝄞c😀😀', n)), true, `n = ${n}`)
  })
})
