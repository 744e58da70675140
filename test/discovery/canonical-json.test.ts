import { strict as assert } from 'node:assert'
import { canonicalBytes, canonicalize } from '../../src/discovery/canonical-json.js'

function fromHex (hex: string): number {
  return Buffer.from(hex, 'hex').readDoubleBE(0)
}

describe('discovery/canonical-json', () => {
  it('canonical json - sorts object keys by UTF-16 code units (RFC 8785 §3.2.3)', () => {
    const input = { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' }
    const keys = Object.keys(JSON.parse(canonicalize(input)) as object)
    // JSON.parse keeps integer-like keys first, so compare the text order instead
    const text = canonicalize(input)
    const order = ['\\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => text.indexOf(`"${k}"`))
    assert.deepEqual([...order].sort((a, b) => a - b), order)
    assert.equal(keys.length, 7)
  })

  it('canonical json - nested objects sorted, no whitespace', () => {
    assert.equal(canonicalize({ b: [3, { z: 1, a: null }], a: { d: true, c: false } }), '{"a":{"c":false,"d":true},"b":[3,{"a":null,"z":1}]}')
  })

  it('canonical json - RFC 8785 §3.2.2 sample', () => {
    const input = JSON.parse('{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}') as unknown
    assert.equal(canonicalize(input), '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
  })

  it('canonical json - string escapes', () => {
    assert.equal(canonicalize('\u0000\u0001\b\t\n\f\r\u001f'), '"\\u0000\\u0001\\b\\t\\n\\f\\r\\u001f"')
    assert.equal(canonicalize('"\\/\u007f\u2028é😀'), '"\\"\\\\/\u007f\u2028é😀"')
  })

  it('canonical json - numbers in ES shortest form (RFC 8785 Appendix B)', () => {
    const vectors: Array<[string, string]> = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555556', '333333333.3333334'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2']
    ]
    for (const [hex, expected] of vectors) assert.equal(canonicalize(fromHex(hex)), expected, hex)
    assert.equal(canonicalize(1700000000000), '1700000000000')
  })

  it('canonical json - rejects what is not JSON data', () => {
    const bad: unknown[] = [undefined, NaN, Infinity, -Infinity, () => 1, 10n, Symbol('s'), new Date(0), new Map(),
      new Uint8Array(2), { a: undefined }, [1, undefined], { a: { b: NaN } }, '\ud800', { '\udc00': 1 }, [1, , 3]] // eslint-disable-line no-sparse-arrays
    for (const value of bad) {
      assert.throws(() => canonicalize(value), { name: 'CanonicalJsonError' }, String(typeof value))
    }
  })

  it('canonical json - rejects nesting beyond the bound', () => {
    let deep: unknown = 1
    for (let i = 0; i < 40; i++) deep = [deep]
    assert.throws(() => canonicalize(deep), { name: 'CanonicalJsonError' })
  })

  it('canonical json - bytes are UTF-8 of the text', () => {
    assert.deepEqual(canonicalBytes({ é: '€' }), new TextEncoder().encode('{"é":"€"}'))
  })
})
