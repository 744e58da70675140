// The direct packet encoder gives exactly @ipld/dag-cbor's bytes (or its error).
import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import * as cbor from '@ipld/dag-cbor'
import { encodeCanonical } from '../../src/packet/canonical.js'
import { decodePacket, encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { ulid } from '../../src/util/ulid.js'

const same = (v: unknown): void => { assert.deepEqual(Buffer.from(encodeCanonical(v)), Buffer.from(cbor.encode(v))) }

function randomText (n: number): string {
  const pool = ['a', 'Z', '0', ' ', '\n', 'é', 'ß', '中', '😀', '\u0000', '"', '\\', '\u007f', '\u0080', '\u07ff', '\u0800', '\uffff']
  let s = ''
  for (let i = 0; i < n; i++) s += pool[Math.floor(Math.random() * pool.length)]
  return s
}

describe('packet - canonical encoder', () => {
  it('matches dag-cbor for integers at every head size, strings, bytes, lists, maps and booleans', () => {
    for (const n of [0, 1, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, -24, -25, -256, -257, -65537, -(2 ** 32) - 1, Number.MIN_SAFE_INTEGER]) same(n)
    for (const len of [0, 1, 23, 24, 255, 256, 65535, 65536, 300_000]) {
      same(randomText(len))
      same(new Uint8Array(randomBytes(len)))
    }
    same([true, false, [], {}, [[1, 'x']], { b: 1, a: 2, aa: 3, ab: [new Uint8Array([1])], z: { y: 'x' } }])
    same(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${String.fromCharCode(97 + (i % 26))}${i}`, i])))
  })

  it('matches dag-cbor for ASCII strings on both sides of the short-string path (64 code units) and its head sizes, and non-ASCII at any place in them', () => {
    const ascii = (n: number): string => Array.from({ length: n }, (_, i) => String.fromCharCode(i % 128)).join('')
    for (const len of [0, 1, 22, 23, 24, 25, 63, 64, 65, 255, 256, 512, 70_000]) {
      same(ascii(len))
      same({ [ascii(Math.min(len, 40)).replace(/[^a-z]/g, 'k') + 'x']: ascii(len) })
      for (const at of [0, Math.floor(len / 2), len - 1]) {
        if (len === 0) continue
        for (const c of ['é', '中', '😀', '\ud800', '\u0080', '\u007f']) same(ascii(len).slice(0, at) + c + ascii(len).slice(at + 1))
      }
    }
  })

  it('hands other values to dag-cbor: floats, lone surrogates, non-ASCII keys, null; undefined fails the same way', () => {
    same(1.5)
    same('\ud800x')
    same({ é: 1, a: 2 })
    same(null)
    assert.throws(() => cbor.encode({ a: undefined }))
    assert.throws(() => encodeCanonical({ a: undefined }))
  })

  it('encodePacket gives dag-cbor bytes for random packets, which decode back', () => {
    const from = generateNodeKey().id
    const to = generateNodeKey().id
    for (let i = 0; i < 300; i++) {
      const p: Packet = {
        id: ulid(),
        from,
        to,
        from_name: 'tx' + String(i),
        to_name: randomText(1 + (i % 30)),
        signal: i % 3 === 0 ? 'ESCALATE' : 'MESSAGE',
        scope: { files: Array.from({ length: i % 4 }, () => randomText(i % 50)), zone: i % 2 === 0 ? 'project' : 'kernel' },
        payload: i % 3 === 0 ? { options: ['a', randomText(i % 9)], text: randomText(i * 7) } : { text: randomText(i * 13 % 3000) },
        ts: Date.now() + i,
        ...(i % 5 === 0 ? { priority: 'high' as const, requires_reply: i % 10 === 0, conversation_id: ulid() } : {}),
        ...(i % 2 === 0 ? { proof: { grants: [new Uint8Array(randomBytes(300 + i))], lineage: i % 4 === 0 ? [new Uint8Array(randomBytes(150))] : undefined } } : {})
      }
      const bytes = encodePacket(p)
      const valid = decodePacket(bytes)
      assert.deepEqual(Buffer.from(bytes), Buffer.from(cbor.encode(cbor.decode(bytes))))
      assert.deepEqual(Buffer.from(encodePacket(valid)), Buffer.from(bytes))
      same(cbor.decode(bytes))
    }
  })
})
