import { strict as assert } from 'node:assert'
import { LineSplitter } from '../../src/control/protocol.js'

function split (chunks: string[], max?: number): string[] {
  const lines: string[] = []
  const s = new LineSplitter((l) => lines.push(l), max)
  for (const c of chunks) s.push(c)
  return lines
}

describe('control - line splitter', () => {
  const text = 'first\n{"a":1}\n\n  \nlast line é 😀\n'
  const want = ['first', '{"a":1}', 'last line é 😀']

  it('gives the same lines, in order, however the text is cut into chunks', () => {
    assert.deepEqual(split([text]), want)
    for (let size = 1; size <= text.length; size++) {
      const chunks: string[] = []
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size))
      assert.deepEqual(split(chunks), want, `chunks of ${size}`)
    }
  })

  it('holds an unfinished line until its newline arrives', () => {
    const lines: string[] = []
    const s = new LineSplitter((l) => lines.push(l))
    s.push('abc')
    s.push('def')
    assert.deepEqual(lines, [])
    s.push('ghi\nj')
    assert.deepEqual(lines, ['abcdefghi'])
    s.push('\n')
    assert.deepEqual(lines, ['abcdefghi', 'j'])
  })

  it('joins a line of many chunks', () => {
    const chunks = Array.from({ length: 2000 }, (_, i) => `${i},`)
    assert.deepEqual(split([...chunks, '\n']), [chunks.join('')])
  })

  it('refuses a line over the bound, counted across chunks, after the complete lines before it', () => {
    const lines: string[] = []
    const s = new LineSplitter((l) => lines.push(l), 10)
    s.push('ok\n12345')
    assert.throws(() => s.push('678901'), /longer than 10/)
    assert.deepEqual(lines, ['ok'])
    assert.deepEqual(split(['1234567890\n'], 10), ['1234567890'], 'a complete line is not held')
  })
})
