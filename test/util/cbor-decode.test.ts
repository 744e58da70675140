// decodeCbor against @ipld/dag-cbor's decode: the same values and the same
// errors for everything, except that a text string's leading U+FEFF is kept
// (dag-cbor's TextDecoder drops it).
import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { decodeCbor } from '../../src/util/cbor-decode.js'
import { seeded } from '../../src/util/seeded.js'

const rnd = seeded(0xb0b)
const int = (n: number): number => Math.floor(rnd() * n)
const PIECES = ['a', 'é', '中', '😀', '\ufeff', '\ufffd', '\n', '"']

function text (max: number): string {
  let s = ''
  for (let n = int(max + 1); n > 0; n--) s += PIECES[int(PIECES.length)]
  return s
}

function value (depth: number): unknown {
  const kind = depth > 3 ? int(5) : int(8)
  switch (kind) {
    case 0: return text(40)
    case 1: return int(2 ** 31) - 2 ** 30
    case 2: return [null, true, false, 1.5][int(4)]
    case 3: return Uint8Array.from({ length: int(20) }, () => int(256))
    case 4: return 'x'.repeat([0, 23, 24, 255, 256, 65_536][int(6)])
    case 5: return Array.from({ length: int(5) }, () => value(depth + 1))
    default: return Object.fromEntries(Array.from({ length: int(5) }, () => [text(8), value(depth + 1)]))
  }
}

/** The value with every string's leading U+FEFF dropped: what dag-cbor's decode gives. */
function withoutLeadingBom (v: unknown): unknown {
  if (typeof v === 'string') return v.startsWith('\ufeff') ? v.slice(1) : v
  if (Array.isArray(v)) return v.map(withoutLeadingBom)
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [withoutLeadingBom(k), withoutLeadingBom(x)]))
  }
  return v
}

function outcome (f: () => unknown): { ok: true, v: unknown } | { ok: false, message: string } {
  try { return { ok: true, v: f() } } catch (err) { return { ok: false, message: (err as Error).message } }
}

describe('util - decodeCbor keeps a leading U+FEFF and is dag-cbor otherwise', () => {
  it('gives back what was encoded, leading BOMs in keys and values included, for thousands of random values', () => {
    let boms = 0
    for (let i = 0; i < 3000; i++) {
      const v = value(0)
      const bytes = cbor.encode(v)
      assert.deepStrictEqual(decodeCbor(bytes), v)
      // dag-cbor differs only by the dropped marks, or refuses a map whose keys collide without them ("" and "\ufeff")
      const theirs = outcome(() => cbor.decode(bytes))
      if (theirs.ok) assert.deepStrictEqual(theirs.v, withoutLeadingBom(v))
      else assert.match(theirs.message, /repeat map key/)
      assert.deepStrictEqual(cbor.encode(decodeCbor(bytes)), bytes, 'decoded and encoded again: the same bytes')
      if (JSON.stringify(v)?.includes('"\ufeff')) boms++
    }
    assert.ok(boms > 300, `random values with a leading BOM somewhere: ${boms}`)
  })

  it('keeps the mark in strings of every head size, one or two marks, and a mark alone', () => {
    for (const n of [0, 1, 19, 20, 21, 252, 253, 65_532, 65_533, 70_000]) {
      for (const s of ['\ufeff' + 'y'.repeat(n), '\ufeff\ufeff' + 'é'.repeat(n)]) {
        assert.equal(decodeCbor(cbor.encode(s)), s)
        assert.equal(decodeCbor<Record<string, string>>(cbor.encode({ [s]: s }))[s], s)
      }
    }
    assert.equal(decodeCbor(cbor.encode('\ufeff')), '\ufeff')
    assert.equal(decodeCbor(cbor.encode('mid \ufeff dle')), 'mid \ufeff dle')
  })

  it('reads Buffers, subarrays and CIDs as dag-cbor does', async () => {
    const cid = CID.create(1, cbor.code, await sha256.digest(new Uint8Array([1, 2, 3])))
    const v = { '\ufeffk': ['\ufeffv', cid, new Uint8Array([9, 9])] }
    const bytes = cbor.encode(v)
    const framed = new Uint8Array(bytes.length + 4)
    framed.set(bytes, 2)
    for (const b of [bytes, Buffer.from(bytes), framed.subarray(2, 2 + bytes.length)]) {
      const got = decodeCbor<Record<string, [string, CID, Uint8Array]>>(b)
      assert.equal(got['\ufeffk'][0], '\ufeffv')
      assert.ok(got['\ufeffk'][1].equals(cid))
      assert.equal(got['\ufeffk'][2].constructor, Uint8Array)
      assert.deepEqual([...got['\ufeffk'][2]], [9, 9])
    }
  })

  it('rejects what dag-cbor rejects, with the same message', () => {
    const bad = [
      [0x18, 0x01], // non-minimal integer
      [0x9f, 0x01, 0xff], // indefinite-length array
      [0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], // repeated map key
      [0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0], // NaN
      [0x63, 0xef, 0xbb], // text cut short inside the mark
      [0x01, 0x02], // bytes after the value
      [0xd8, 0x2b, 0x40], // an unknown tag
      []
    ]
    for (const b of bad) {
      const bytes = Uint8Array.from(b)
      const want = outcome(() => cbor.decode(bytes))
      assert.equal(want.ok, false, `dag-cbor rejects ${Buffer.from(bytes).toString('hex')}`)
      assert.deepStrictEqual(outcome(() => decodeCbor(bytes)), want)
    }
  })

  it('turns invalid UTF-8 after a mark into U+FFFD, as dag-cbor does without one', () => {
    assert.equal(decodeCbor(Uint8Array.from([0x64, 0xef, 0xbb, 0xbf, 0xff])), '\ufeff\ufffd')
    assert.equal(cbor.decode(Uint8Array.from([0x61, 0xff])), '\ufffd')
  })
})
