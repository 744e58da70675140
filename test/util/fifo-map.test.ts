import { strict as assert } from 'node:assert'
import { FifoMap } from '../../src/util/fifo-map.js'

describe('FifoMap - bounded map that drops the oldest entry first', () => {
  it('keeps at most its limit and evicts in first-insertion order, telling the caller each time', () => {
    const evicted: Array<[string, number]> = []
    const m = new FifoMap<string, number>(3, (k, v) => evicted.push([k, v]))
    for (let i = 0; i < 6; i++) m.set(`k${i}`, i)
    assert.equal(m.size, 3)
    assert.deepEqual(evicted, [['k0', 0], ['k1', 1], ['k2', 2]])
    assert.deepEqual(['k3', 'k4', 'k5'].map((k) => m.get(k)), [3, 4, 5])
    assert.equal(m.has('k2'), false)
  })

  it('a key set again keeps its place and its newest value, as a Map does', () => {
    const evicted: string[] = []
    const m = new FifoMap<string, number>(2, (k) => evicted.push(k))
    m.set('a', 1)
    m.set('b', 2)
    m.set('a', 10)
    m.set('c', 3)
    assert.deepEqual(evicted, ['a'])
    assert.equal(m.get('b'), 2)
    assert.equal(m.get('c'), 3)
  })

  it('stays exact across many evictions (the queue is compacted along the way)', () => {
    const evicted: number[] = []
    const m = new FifoMap<number, number>(100, (k) => evicted.push(k))
    for (let i = 0; i < 50_000; i++) m.set(i, i * 2)
    assert.equal(m.size, 100)
    assert.equal(evicted.length, 49_900)
    assert.ok(evicted.every((k, i) => k === i), 'evicted in insertion order, each once')
    for (let i = 49_900; i < 50_000; i++) assert.equal(m.get(i), i * 2)
  })

  it('refuses a limit that is not a positive integer', () => {
    assert.throws(() => new FifoMap(0), RangeError)
    assert.throws(() => new FifoMap(1.5), RangeError)
  })
})
