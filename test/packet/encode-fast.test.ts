// The one-pass packet encode (encode-fast.ts, PacketCodec.encode / encodeAfter)
// against its reference (validatePacket(stripUndefined(p)) then the canonical
// encoder, PacketCodec.encodeReference / encodeAfterReference): the same bytes
// (and the same room before them) for every packet the reference accepts, the
// same error (class, code, message) for every packet it refuses, and the
// one-pass writer answering false (writing nothing used) for each of those.
import { strict as assert } from 'node:assert'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { CanonicalEncoder } from '../../src/packet/canonical.js'
import { MAX_PACKET_BYTES, PacketCodec } from '../../src/packet/codec.js'
import { writePacket } from '../../src/packet/encode-fast.js'
import { PACKET_KEYS } from '../../src/packet/fields.js'
import { SIGNALS, type Packet, type Payload, type Signal } from '../../src/packet/types.js'
import { seeded } from '../../src/util/seeded.js'
import { payloadFor } from '../utils/payloads.js'
import { ulid } from '../../src/util/ulid.js'

const rnd = seeded(0xe1c0de)
const int = (n: number): number => Math.floor(rnd() * n)
const pick = <T>(list: readonly T[]): T => list[int(list.length)]
const chance = (p: number): boolean => rnd() < p

// no surrogate here: with one (a pair too), neither path writes directly (dag-cbor decides; checked apart)
const PIECES = ['a', 'Z', '0', ' ', '\n', '"', '\\', '\u0000', '\u007f', '\u0080', 'é', 'ß', '\u07ff', '\u0800', '中', '\ufffd', '\uffff', '\ufeff']

function randomText (max: number): string {
  const units = int(max + 1)
  let s = ''
  while (s.length < units) {
    const piece = pick(PIECES)
    if (s.length + piece.length > max) break
    s += piece
  }
  return s
}
const nonEmpty = (max: number): string => randomText(max - 1) + 'x'
const keys = Array.from({ length: 3 }, () => generateNodeKey().id)

function randomJson (depth: number): unknown {
  switch (depth > 3 ? int(4) : int(7)) {
    case 0: return randomText(40)
    case 1: return pick([0, 1, 23, 24, 255, 256, 65536, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, -25, -(2 ** 40)])
    case 2: return chance(0.5)
    case 3: return null
    case 4: return Array.from({ length: int(4) }, () => randomJson(depth + 1))
    default: return Object.fromEntries(Array.from({ length: int(5) }, () => [pick(['a', 'bb', 'k1', 'zz', 'ab', 'b', 'B', 'aaa']), randomJson(depth + 1)]))
  }
}

function randomPayload (signal: Signal): Payload {
  const t = (): string => chance(0.1) ? '' : chance(0.05) ? 'x'.repeat(2000 + int(5000)) : randomText(600)
  const v = (): Payload['context'] => (chance(0.7) ? t() : randomJson(0)) as Payload['context']
  const options = (): Payload['options'] => Array.from({ length: 1 + int(5) }, () => chance(0.7) ? randomText(40) : { id: nonEmpty(10), label: randomText(20), ...(chance(0.5) ? { description: randomText(20) } : {}) })
  return payloadFor(signal, { t, v: v, options, chance, pick })
}

const TS = [0, 1, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER]

function randomPacket (): Packet {
  const signal = pick(SIGNALS)
  const p: Packet = {
    id: ulid(),
    from: pick(keys),
    to: pick(keys),
    signal,
    scope: { files: Array.from({ length: chance(0.02) ? 1000 : int(4) }, () => randomText(30)), zone: pick(['kernel', 'project', 'personal'] as const) },
    payload: randomPayload(signal),
    ts: chance(0.3) ? pick(TS) : Date.now() + int(1e6)
  }
  const o = p as unknown as Record<string, unknown>
  for (const k of ['from_name', 'to_name', 'session_id', 'conversation_id', 'in_reply_to', 'broadcast']) if (chance(0.4)) o[k] = nonEmpty(chance(0.1) ? 256 : 20)
  for (const k of ['return_to', 'group_id']) if (chance(0.3)) o[k] = pick(keys)
  if (chance(0.3)) p.priority = pick(['low', 'normal', 'high'] as const)
  for (const k of ['requires_reply', 'no_receipt']) if (chance(0.3)) o[k] = chance(0.5)
  if (chance(0.5)) {
    const list = (): Uint8Array[] => Array.from({ length: int(17) }, () => {
      const b = new Uint8Array(pick([0, 1, 23, 24, 200, 300]))
      for (let i = 0; i < b.length; i++) b[i] = int(256)
      return chance(0.2) ? Buffer.from(b) : b
    })
    p.proof = {}
    if (chance(0.7)) p.proof.grants = list()
    if (chance(0.5)) p.proof.lineage = list()
  }
  return p
}

type Outcome = { bytes: string, whole?: string } | { name: string, code?: string, message: string }

function outcome (f: () => { bytes: Uint8Array, whole?: Uint8Array }): Outcome {
  try {
    const r = f()
    return { bytes: Buffer.from(r.bytes).toString('hex'), whole: r.whole === undefined ? undefined : Buffer.from(r.whole).toString('hex') }
  } catch (err) {
    const e = err as Error & { code?: string }
    return { name: e.name, code: e.code, message: e.message }
  }
}

const codec = new PacketCodec()
const ref = new PacketCodec()
const direct = new CanonicalEncoder()
/** whether the one-pass writer wrote the packet itself */
const wrote = (p: unknown): boolean => direct.encodeDirectAfter(0, writePacket, p) !== undefined

/** Both paths agree on `p`, at a room of 0 and one of a store header; returns whether the reference accepted it. */
function agree (p: unknown, what: string): boolean {
  const room = 3 + int(200)
  const fast = outcome(() => codec.encodeAfter(room, p as Packet))
  const reference = outcome(() => ref.encodeAfterReference(room, p as Packet))
  assert.deepEqual(fast, reference, what)
  assert.deepEqual(outcome(() => ({ bytes: codec.encode(p as Packet) })), outcome(() => ({ bytes: ref.encodeReference(p as Packet) })), what)
  const accepted = 'bytes' in reference
  // (the size bound is checked on the bytes, after either path wrote them)
  if (!accepted && reference.name !== 'PacketTooLargeError') assert.equal(wrote(p), false, `${what}: the one-pass writer took a packet the reference refuses`)
  return accepted
}

// ---- values to break a packet with ------------------------------------------

class Box { text = 'x' }
const STRANGE: Array<() => unknown> = [
  () => undefined, () => null, () => '', () => 'x', () => 'x'.repeat(256), () => 'x'.repeat(257), () => 'MESSAGE', () => 'message', () => 'project',
  () => 0, () => -1, () => 1.5, () => NaN, () => Infinity, () => 2 ** 53, () => true, () => false,
  () => ({}), () => [], () => ['a'], () => [1], () => new Uint8Array([1]), () => Buffer.from('ab'), () => Object.create(null),
  () => new Box(), () => [, 'a'], () => '\ud800', () => 'a\udfffb', () => ulid().toLowerCase(), () => keys[0].slice(0, -1) + 'l',
  () => keys[1], () => ulid(), () => ({ files: [] }), () => ({ zone: 'kernel' }), () => ({ text: 'x' }), () => ({ context: 1.5 }),
  () => ({ grants: [new Uint8Array(2)] }), () => [new Uint8Array(1), 'x'], () => Array.from({ length: 17 }, () => new Uint8Array(1)),
  () => Array.from({ length: 101 }, () => 'o'), () => [{ id: 'a', label: 'b', extra: 1 }], () => [{ id: '', label: 'b' }], () => ['x'.repeat(4097)],
  () => 'x'.repeat(256 * 1024 + 1), () => { const a: unknown[] = []; let c = a; for (let i = 0; i < 40; i++) { const n: unknown[] = []; c.push(n); c = n } return a }
]
const strange = (): unknown => pick(STRANGE)()
const shown = (v: unknown): string => { try { return JSON.stringify(v)?.slice(0, 60) ?? String(v) } catch { return Object.prototype.toString.call(v) } }

/** the places of a packet a value can be put */
const PATHS: string[][] = [
  ...PACKET_KEYS.map((k) => [k]),
  ['extra'], ['constructor'],
  ['scope', 'files'], ['scope', 'zone'], ['scope', 'extra'], ['scope', 'files', '0'],
  ...['text', 'context', 'decision', 'options', 'result', 'extra', 'toString'].map((k) => ['payload', k]),
  ['payload', 'options', '0'], ['payload', 'context', 'a'],
  ['proof', 'grants'], ['proof', 'lineage'], ['proof', 'extra'], ['proof', 'grants', '0']
]

function set (p: Packet, path: string[], v: unknown): void {
  let o = p as unknown as Record<string, unknown>
  for (const k of path.slice(0, -1)) {
    const next = o[k]
    if (typeof next !== 'object' || next === null) return
    // a copy: the random packet's sub-objects may be shared with nothing else, but stay safe
    const copy = Array.isArray(next) ? [...next] : { ...next }
    o[k] = copy
    o = copy as Record<string, unknown>
  }
  o[path[path.length - 1]] = v
}

describe('packet - one-pass encode (validate and encode together) against its reference', () => {
  it('writes the reference\'s bytes for 3,000 random valid packets, itself (not through the reference)', () => {
    for (let i = 0; i < 3000; i++) {
      const p = randomPacket()
      assert.ok(agree(p, `packet ${i}`), `packet ${i} refused`)
      assert.ok(wrote(p), `packet ${i} not written in one pass`)
    }
  })

  it('the T2 packet shape (512 B text, a grant, the carried names) takes the one-pass path', () => {
    const p: Packet = { id: ulid(), from: keys[0], to: keys[1], from_name: 'a', to_name: 'b', signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'x'.repeat(512) }, ts: Date.now(), proof: { grants: [new Uint8Array(380)] } }
    assert.ok(agree(p, 't2'))
    assert.ok(wrote(p))
    const { bytes, whole } = codec.encodeAfter(40, p)
    assert.ok(whole !== undefined && whole.buffer === bytes.buffer && bytes.byteOffset === whole.byteOffset + 40)
  })

  it('agrees on 10,000 packets with one field replaced by a strange value or removed (same bytes, or the same error)', () => {
    let refused = 0
    for (let i = 0; i < 10_000; i++) {
      const p = randomPacket()
      const path = pick(PATHS)
      const v = chance(0.1) ? undefined : strange()
      if (chance(0.1)) delete (p as unknown as Record<string, unknown>)[path[0]]
      else set(p, path, v)
      if (!agree(p, `mutation ${i}: ${path.join('.')} = ${shown(v)}`)) refused++
    }
    assert.ok(refused > 2500, `only ${refused} mutations refused: the mutations do not test refusal`)
  })

  it('agrees on the shapes stripUndefined and validatePacket treat apart', () => {
    const base = (): Packet => ({ id: ulid(), from: keys[0], to: keys[1], signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: 1 })
    const cases: Array<[string, () => unknown]> = [
      ['no scope (filled in)', () => { const p = base() as Partial<Packet>; delete p.scope; return p }],
      ['a scope without files, without zone', () => ({ ...base(), scope: {} })],
      ['an empty proof', () => ({ ...base(), proof: {} })],
      ['a proof with undefined lists', () => ({ ...base(), proof: { grants: undefined, lineage: undefined } })],
      ['undefined optional fields', () => ({ ...base(), priority: undefined, session_id: undefined, proof: undefined })],
      ['an unknown payload key set to undefined', () => ({ ...base(), payload: { text: 'hi', extra: undefined } })],
      ['a payload field set to undefined', () => ({ ...base(), payload: { text: 'hi', context: undefined } })],
      ['unknown top-level keys', () => ({ ...base(), extra: 1, 'é': 'x' })],
      ['a non-enumerable field', () => Object.defineProperty(base(), 'session_id', { value: 's', enumerable: false })],
      ['a non-enumerable required field', () => Object.defineProperty({ ...base(), id: undefined }, 'id', { value: ulid(), enumerable: false })],
      ['inherited fields', () => Object.assign(Object.create(base()), { extra: 1 })],
      ['a packet without a prototype', () => Object.assign(Object.create(null), base())],
      ['a payload without a prototype', () => ({ ...base(), payload: Object.assign(Object.create(null), { text: 'hi' }) })],
      ['a scope without a prototype', () => ({ ...base(), scope: Object.assign(Object.create(null), { files: ['a'], zone: 'kernel' }) })],
      ['a proof without a prototype', () => ({ ...base(), proof: Object.assign(Object.create(null), { grants: [] }) })],
      ['inherited scope fields', () => ({ ...base(), scope: Object.create({ files: ['a'], zone: 'kernel' }) })],
      ['a context object without a prototype', () => ({ ...base(), payload: { context: Object.assign(Object.create(null), { a: 1 }) } })],
      ['a context with a float', () => ({ ...base(), payload: { context: { a: 1.5 } } })],
      ['a context with a non-ASCII key', () => ({ ...base(), payload: { context: { 'é': 1, a: [null, true] } } })],
      ['a lone surrogate in the text', () => ({ ...base(), payload: { text: 'a\ud800b' } })],
      ['a lone surrogate in a name', () => ({ ...base(), from_name: '\udc00' })],
      ['a surrogate pair in the text, a name and a file', () => ({ ...base(), payload: { text: 'a😀b' }, to_name: '𝄞', scope: { files: ['😀'], zone: 'project' } })],
      ['a sparse files list', () => ({ ...base(), scope: { files: [, 'a'], zone: 'project' } })],
      ['a sparse grants list', () => ({ ...base(), proof: { grants: [, new Uint8Array(1)] } })],
      ['an array as the packet', () => [base()]],
      ['a Uint8Array as the payload', () => ({ ...base(), payload: new Uint8Array(2) })],
      ['an array as the payload', () => ({ ...base(), payload: ['hi'] })],
      ['a string', () => 'packet'],
      ['null', () => null],
      ['a packet over the size bound', () => ({ ...base(), payload: { text: 'x'.repeat(256 * 1024) }, scope: { files: Array.from({ length: 1000 }, () => 'f'.repeat(300)), zone: 'project' } })],
      ['a text at the bound', () => ({ ...base(), payload: { text: 'x'.repeat(256 * 1024) } })],
      ['ts 2^53', () => ({ ...base(), ts: 2 ** 53 })],
      ['ts -0', () => ({ ...base(), ts: -0 })]
    ]
    for (const [what, make] of cases) agree(make(), what)
    assert.ok(!agree(cases[28][1](), 'size'), 'the packet over the bound is refused')
    assert.ok(MAX_PACKET_BYTES > 0)
  })
})
