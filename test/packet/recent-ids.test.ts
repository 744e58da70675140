// The decoders' cache of recently checked node ids (recent-ids.ts): a stream's
// from and to ids both stay found however they hash, equal bytes only.
import { strict as assert } from 'node:assert'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { RecentIds } from '../../src/packet/recent-ids.js'

/** an id's CBOR text: head (0x78, length) and UTF-8 */
const encoded = (id: string): Uint8Array => Uint8Array.from([0x78, id.length, ...Buffer.from(id)])

describe('packet - RecentIds', () => {
  it('two ids remembered one after the other are both found, read alternately, for 600 random pairs (1 in 64 share a set)', () => {
    for (let t = 0; t < 600; t++) {
      const ids = new RecentIds()
      const [a, b] = [generateNodeKey().id, generateNodeKey().id]
      ids.remember(encoded(a), a)
      ids.remember(encoded(b), b)
      for (let round = 0; round < 3; round++) {
        for (const id of [a, b, b, a]) assert.equal(ids.find(encoded(id), 0, encoded(id).length)?.id, id, `pair ${t}, round ${round}`)
      }
    }
  })

  it('only equal bytes are found; a third id of a set pushes out the one found least recently', () => {
    const ids = new RecentIds()
    const set = (id: string): number => { const e = encoded(id); const n = e.length; return (e[n - 1] * 31 + e[n - 2] * 7 + e[n - 3]) & 63 }
    const same: string[] = []
    const first = generateNodeKey().id
    same.push(first)
    while (same.length < 3) { const id = generateNodeKey().id; if (set(id) === set(first)) same.push(id) }
    const [a, b, c] = same
    ids.remember(encoded(a), a)
    ids.remember(encoded(b), b)
    assert.equal(ids.find(encoded(c), 0, encoded(c).length), undefined, 'not remembered: not found')
    const bent = encoded(a); bent[10] ^= 1
    assert.equal(ids.find(bent, 0, bent.length), undefined, 'one byte different: not found')
    assert.equal(ids.find(encoded(a), 0, encoded(a).length)?.id, a) // a found last: b is the least recent
    ids.remember(encoded(c), c)
    assert.equal(ids.find(encoded(b), 0, encoded(b).length), undefined)
    assert.equal(ids.find(encoded(a), 0, encoded(a).length)?.id, a)
    assert.equal(ids.find(encoded(c), 0, encoded(c).length)?.id, c)
    // inside a larger buffer, at an offset, with bytes after it
    const inside = Uint8Array.from([1, 2, ...encoded(c), 0x62, 0x74, 0x73])
    assert.equal(ids.find(inside, 2, inside.length)?.id, c)
  })
})
