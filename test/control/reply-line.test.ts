import { strict as assert } from 'node:assert'
import { replyLine, replyLineReference } from '../../src/control/reply-line.js'
import { ulid } from '../../src/util/ulid.js'

const STRINGS = ['', 'queued', 'off', 'a"b', 'a\\b', 'tab\t', 'nl\n', '\x1f', '\x20', '\x7f', 'é', '\u2028', '\ud83d\ude00', '\ud800', 'x\udfff', '</script>']
const IDS = [0, 1, 7, 2 ** 31, 2 ** 53 - 1, 2 ** 53 + 2, -1, -0, 1.5, 1e21, 1e-7, NaN, Infinity, -Infinity]

/** a few results of every kind the server answers, and near misses of the flat shape */
function results (): unknown[] {
  const out: unknown[] = [
    undefined, null, 0, 'text', true, [], ['a'], {}, { id: ulid(), state: 'queued', receipt: 'queued' },
    { id: ulid(), state: 'delivered', seq: 3, receipt: 'delivered' }, { id: ulid(), state: 'queued', receipt: 'off' },
    { a: '1', b: '2', c: '3', d: '4' }, { a: '1', b: '2', c: '3', d: '4', e: '5' }, { 1: 'x', b: 'y', 0: 'z' },
    { a: undefined }, { a: '1', b: undefined }, { a: () => 1 }, { a: { b: 'c' } }, { toJSON: () => 'j' }, { toJSON: 'j' },
    { [Symbol('s')]: 'x', a: 'b' }, new Date(0), new (class X { a = 'b' })(), Object.create(null) as unknown,
    Object.assign(Object.create({ inherited: 'x' }) as object, { a: 'b' }), Object.defineProperty({}, 'hidden', { value: 'x', enumerable: false }),
    Object.defineProperty({ a: 'b' }, 'g', { get: () => 'got', enumerable: true })
  ]
  const nullProto = Object.create(null) as Record<string, string>
  nullProto.a = 'b'
  out.push(nullProto)
  for (const a of STRINGS) for (const b of STRINGS) out.push({ id: a, state: b, receipt: 'queued' }, { [a]: b }, { k: a, [b]: 'v' })
  return out
}

describe('control - reply lines (template against JSON.stringify)', () => {
  it('gives the reference line for every id and result, flat or not', () => {
    for (const id of IDS) {
      for (const result of results()) {
        assert.equal(replyLine(id, result), replyLineReference(id, result), `id ${id}, result ${String(JSON.stringify(result))}`)
      }
    }
  })

  it('random flat results of printable and awkward strings', () => {
    const pick = (): string => Array.from({ length: Math.floor(Math.random() * 6) }, () => String.fromCharCode(Math.floor(Math.random() * 0x10000))).join('')
    for (let k = 0; k < 20_000; k++) {
      const r: Record<string, string> = {}
      for (let j = Math.floor(Math.random() * 6); j > 0; j--) r[Math.random() < 0.5 ? pick() : `k${j}`] = Math.random() < 0.5 ? pick() : ulid()
      const id = Math.floor(Math.random() * 2 ** 32)
      assert.equal(replyLine(id, r), replyLineReference(id, r))
    }
  })
})
