import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { JsonBytes } from '../../src/util/json-bytes.js'
import { renderEntry } from '../../src/packet/render.js'
import { EntryJsonRenderer, entriesJsonEncoder, entriesJsonEncoderOfObjects } from '../../src/packet/render-json.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { ulid } from '../../src/util/ulid.js'
import type { InboxEntry } from '../../src/store/inbox.js'

const A = generateNodeKey().id
const B = generateNodeKey().id
const C = generateNodeKey().id
/** A knows the name of B only */
const label = (id: string): string => id === B ? 'bee (verified)' : id

type Outcome = { json: Buffer } | { threw: true }

/** What the object path gives: JSON.stringify(renderEntry(...)) as UTF-8, or a throw. */
function expected (e: InboxEntry): Outcome {
  try { return { json: Buffer.from(JSON.stringify(renderEntry(e, label))) } } catch { return { threw: true } }
}

function actual (e: InboxEntry, r = new EntryJsonRenderer(label)): Outcome {
  const out = new JsonBytes(16)
  out.ascii('prefix,')
  try { r.write(e, out) } catch { return { threw: true } }
  const bytes = out.bytes()
  assert.equal(bytes.subarray(0, 7).toString(), 'prefix,', 'what came before is kept')
  return { json: Buffer.from(bytes.subarray(7)) }
}

function same (e: InboxEntry, what: string, r?: EntryJsonRenderer): void {
  const want = expected(e)
  const got = actual(e, r)
  if ('threw' in want) { assert.ok('threw' in got, `${what}: renderEntry throws, the byte renderer must too`); return }
  assert.ok('json' in got, `${what}: the byte renderer threw`)
  assert.equal(got.json.toString('hex'), want.json.toString('hex'), `${what}:\n got  ${got.json.toString()}\n want ${want.json.toString()}`)
}

function entry (packet: Uint8Array, seq = 7, received = 1_700_000_000_123): InboxEntry {
  return { seq, packet, received }
}

function packet (extra: Partial<Packet> = {}): Packet {
  return { id: ulid(), from: A, to: B, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hello' }, ts: Date.now(), ...extra }
}

const TEXTS = [
  '', 'plain ascii', 'quote " and backslash \\ and slash /', 'controls \b\f\n\r\t \u0000 \u0001 \u001b \u001f \u007f',
  'latin é ü ß', '中文 テキスト', 'emoji 😀 🧪 and U+2028 \u2028 U+2029 \u2029', '\uFEFFleading BOM', 'inner \uFEFF BOM',
  'x'.repeat(23), 'y'.repeat(24), 'z'.repeat(255), 'w'.repeat(256), 'v'.repeat(70_000), '"'.repeat(40), 'line1\nline2\n'
]

describe('host - the byte renderer of inbox entries', () => {
  it('gives byte-identical JSON for valid packets covering every field, without decoding them', () => {
    const r = new EntryJsonRenderer(label)
    const full = packet({
      from_name: 'ay', to_name: 'bee-carried', signal: 'ESCALATE', return_to: C, session_id: 's-1', conversation_id: 'c "1"', in_reply_to: 'r\\1',
      priority: 'high', requires_reply: true, scope: { files: ['a.ts', 'dir/ü.md'], zone: 'kernel' },
      payload: { text: 't', options: ['one', 'two "2"', 'drei ✓'] },
      proof: { lineage: [new Uint8Array([1, 2, 3])], grants: [new Uint8Array(40).fill(9)] }
    })
    same(entry(encodePacket(full)), 'every field', r)
    same(entry(encodePacket(packet({ signal: 'HANDOFF', payload: { context: 'ctx', decision: 'd' } }))), 'context and decision', r)
    same(entry(encodePacket(packet({ signal: 'RETURN', payload: { result: 'r' } }))), 'result', r)
    same(entry(encodePacket(packet({ from: B, to: A, from_name: 'b-carried' }))), 'known sender, carried name ignored', r)
    same(entry(encodePacket(packet({ from: C, to: C }))), 'unknown ids, no carried names', r)
    same(entry(encodePacket(packet({ from: C, from_name: 'see', to_name: 'tee' }))), 'unknown ids, carried names', r)
    same(entry(encodePacket(packet({ requires_reply: false, priority: 'low' }))), 'false flag', r)
    for (const [i, text] of TEXTS.entries()) {
      same(entry(encodePacket(packet({ payload: { text }, session_id: text === '' ? undefined : text.slice(0, 256) }))), `text #${i}`, r)
    }
    // none takes the object path: a leading BOM is copied as the decoders keep it
    assert.equal(r.fallbacks, 0)
  })

  it('renders seq and received as JSON does, fractions and non-finite numbers included', () => {
    const bytes = encodePacket(packet())
    for (const [seq, received] of [[0, 0], [1, 1.5], [2 ** 53 - 1, -0], [3, Number.NaN], [4, Infinity], [5, 1e21], [6, 1e-7]]) {
      same(entry(bytes, seq, received), `seq ${seq} received ${received}`)
    }
  })

  it('entriesJsonEncoder writes pages of 1, 2, 31, 32 and 300 entries as its reference does (renderEntry + JSON.stringify), corrupt entries included', () => {
    const pool = [
      ...TEXTS.map((text) => entry(encodePacket(packet({ payload: { text } })))),
      entry(encodePacket(packet({ from: B, from_name: 'x', priority: 'high', requires_reply: true }))),
      entry(new Uint8Array([0xa1, 0x61, 0x78, 0x18])), // truncated: both paths must throw
      entry(encodePacket(packet({ from: C, to: A, to_name: 'q' })), 9, Number.NaN)
    ]
    const write = (enc: (k: number, out: JsonBytes) => void, n: number): Outcome => {
      const out = new JsonBytes(64)
      try { for (let k = 0; k < n; k++) { if (k > 0) out.byte(0x2c); enc(k, out) } } catch { return { threw: true } }
      return { json: Buffer.from(out.bytes()) }
    }
    for (const n of [1, 2, 31, 32, 300]) {
      for (let start = 0; start < pool.length; start += 5) {
        const page = Array.from({ length: n }, (_, k) => pool[(start + k) % pool.length])
        const got = write(entriesJsonEncoder(page, label), n)
        const want = write(entriesJsonEncoderOfObjects(page, label), n)
        assert.deepEqual(got, want, `a page of ${n} from ${start}`)
      }
    }
  })

  it('reuses names across a page and still renders each packet right', () => {
    const r = new EntryJsonRenderer(label)
    const pkts = [packet({ from: A }), packet({ from: B, from_name: 'x' }), packet({ from: A, from_name: 'carried-a' }), packet({ from: A }), packet({ from: C, to: A, to_name: 'q' })]
    for (let i = 0; i < 3; i++) for (const [k, p] of pkts.entries()) same(entry(encodePacket(p)), `page entry ${k}`, r)
  })

  it('gives the same result for stored bytes a strict encoder would not write', () => {
    const base = { id: ulid(), from: A, to: B, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'x' }, ts: 1 }
    const odd: Array<[string, Uint8Array]> = [
      ['float ts', cbor.encode({ ...base, ts: 1.5 })],
      ['negative ts', cbor.encode({ ...base, ts: -5 })],
      ['huge ts', cbor.encode({ ...base, ts: 2 ** 60 })],
      ['integer-like payload keys', cbor.encode({ ...base, payload: { 1: 'a', text: 'b', 0: 'c' } })],
      // stored order a, 10; a JavaScript object puts the integer-like key first
      ['integer-like key after a shorter one', cbor.encode({ ...base, payload: { a: 'x', 10: 'y' } })],
      ['odd payload keys', cbor.encode({ ...base, payload: { 'with space': 'a', 'quo"te': 'b', ü: 'c', '': 'd' } })],
      ['nested', cbor.encode({ ...base, payload: { text: { a: [1, -2, null, true, false, [[]], {}] } } })],
      ['bytes rendered', cbor.encode({ ...base, payload: { text: new Uint8Array([1, 2]) } })],
      ['null optional', cbor.encode({ ...base, session_id: null, priority: 'x' })],
      ['non-text from_name', cbor.encode({ ...base, from_name: 5 })],
      ['numeric id', cbor.encode({ ...base, id: 12 })],
      ['numeric from', cbor.encode({ ...base, from: 12 })],
      ['missing signal', cbor.encode({ id: base.id, from: A, to: B, scope: base.scope, payload: base.payload, ts: 1 })],
      ['extra fields', cbor.encode({ ...base, seq: 99, received: 1, zzz: { deep: [new Uint8Array(3)] } })],
      ['not a map', cbor.encode(['a', 1])],
      ['empty map', cbor.encode({})]
    ]
    for (const [what, bytes] of odd) same(entry(bytes), what)
    const valid = encodePacket(packet({ payload: { text: 'abc' } }))
    same(entry(Buffer.concat([valid, Buffer.from([0])])), 'trailing byte')
    same(entry(valid.subarray(0, valid.length - 1)), 'truncated')
    same(entry(new Uint8Array(0)), 'empty')
  })

  it('handles ill-formed UTF-8 and non-minimal heads the way the decoder does', () => {
    const text = 'abcdef'
    const valid = encodePacket(packet({ payload: { text } }))
    const at = Buffer.from(valid).indexOf(Buffer.from(text))
    const cases: Array<[string, number[]]> = [
      ['lone continuation', [0x80]], ['overlong', [0xc0, 0xaf]], ['surrogate', [0xed, 0xa0, 0x80]], ['truncated 3-byte', [0xe2, 0x82]],
      ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]], ['BOM', [0xef, 0xbb, 0xbf]], ['4-byte ok', [0xf0, 0x9f, 0x98, 0x80]]
    ]
    for (const [what, seq] of cases) {
      const b = Buffer.from(valid)
      Buffer.from(seq).copy(b, at)
      same(entry(b), what)
    }
    // the same map, with a 1-byte length head where the length fits in the initial byte
    const padded = Buffer.concat([Buffer.from([0xa1, 0x78, 0x02]), Buffer.from('id'), Buffer.from([0x61, 0x78])])
    same(entry(padded), 'non-minimal length')
  })

  it('agrees with the object path on thousands of corrupted packets', () => {
    let seed = 42
    const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return (seed >>> 16) % n }
    const sources = [packet({ from_name: 'ay', signal: 'ESCALATE', payload: { text: 'hé "x"\n', options: ['a'] }, priority: 'high', session_id: 's' }), packet({ from: B })].map((p) => encodePacket(p))
    const r = new EntryJsonRenderer(label)
    for (let i = 0; i < 5000; i++) {
      const b = Buffer.from(sources[i % sources.length])
      for (let k = 1 + rand(3); k > 0; k--) b[rand(b.length)] = rand(256)
      same(entry(b), `corruption ${i}`, r)
    }
    assert.ok(r.fallbacks > 500 && r.fallbacks < 4500, `both paths were exercised (${r.fallbacks} fallbacks)`)
  })
})
