// The outbox value built around a packet encoded after room for its header
// (PacketCodec.encodeAfter + EntryValueEncoder with `whole`, what the sender
// does for a remote target) is byte for byte the value the reference path
// builds by copying the packet behind a new header; anything that does not
// fit exactly takes the reference path and leaves the caller's buffer alone.
import { strict as assert } from 'node:assert'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { PacketCodec, encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { decodeEntryValue, entryValueReference, EntryValueEncoder } from '../../src/store/outbox-values.js'
import { ulid } from '../../src/util/ulid.js'

const a = generateNodeKey().id
const b = generateNodeKey().id

function packet (text: string, over: Partial<Packet> = {}): Packet {
  return { id: ulid(), from: a, to: b, from_name: 'al', to_name: 'bob', signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text }, ts: Date.now(), ...over }
}

const PACKETS = [
  packet(''),
  packet('x'.repeat(512)),
  packet('y'.repeat(64 * 1024), { conversation_id: 'c', priority: 'high', proof: { lineage: [new Uint8Array([1, 2])], grants: [new Uint8Array(380).fill(7)] } })
]
/** a long non-ASCII text is outside the direct encoder's shapes: dag-cbor encodes it, with no room */
const VIA_DAG_CBOR = packet('é😀'.repeat(20_000))

describe('store - outbox values around a packet encoded after room', () => {
  it('encodeAfter gives the bytes encode gives, after exactly `room` free bytes', () => {
    const codec = new PacketCodec()
    for (const p of PACKETS) {
      for (const room of [0, 1, 140, 777]) {
        const { bytes, whole } = codec.encodeAfter(room, p)
        assert.ok(whole !== undefined)
        assert.deepEqual(bytes, encodePacket(p))
        assert.equal(whole.byteLength, room + bytes.byteLength)
        assert.equal(bytes.buffer, whole.buffer)
        assert.equal(bytes.byteOffset, whole.byteOffset + room)
      }
    }
  })

  it('the value written into the room equals the reference value, and reads back', () => {
    const codec = new PacketCodec()
    const fast = new EntryValueEncoder()
    const reference = new EntryValueEncoder()
    const exp = Date.now() + 60_000
    for (const p of PACKETS) {
      const room = fast.headLength(p.id, p.to, p.from)
      const { bytes, whole } = codec.encodeAfter(room, p)
      const value = fast.encode(p.id, p.to, p.from, exp, bytes, whole)
      assert.equal(value, whole, 'the buffer itself is the value: no copy')
      const ref = reference.encode(p.id, p.to, p.from, exp, encodePacket(p))
      assert.deepEqual(Buffer.from(value), Buffer.from(ref))
      const back = decodeEntryValue(value)
      assert.deepEqual({ i: back.i, to: back.to, from: back.from, exp: back.exp }, { i: p.id, to: p.to, from: p.from, exp })
      assert.deepEqual(Buffer.from(back.p), Buffer.from(encodePacket(p)))
    }
  })

  it('a packet the direct encoder leaves to dag-cbor has no room: the same bytes as encode, and the reference value', () => {
    const codec = new PacketCodec()
    const p = VIA_DAG_CBOR
    const { bytes, whole } = codec.encodeAfter(140, p)
    assert.equal(whole, undefined)
    assert.deepEqual(bytes, encodePacket(p))
    const exp = Date.now()
    assert.deepEqual(Buffer.from(new EntryValueEncoder().encode(p.id, p.to, p.from, exp, bytes, whole)), Buffer.from(new EntryValueEncoder().encode(p.id, p.to, p.from, exp, encodePacket(p))))
  })

  it('a buffer that is not exactly room + packet takes the reference path and is left as it was', () => {
    const codec = new PacketCodec()
    const enc = new EntryValueEncoder()
    const p = PACKETS[1]
    const exp = Date.now()
    const ref = new EntryValueEncoder().encode(p.id, p.to, p.from, exp, encodePacket(p))
    const head = enc.headLength(p.id, p.to, p.from)
    for (const room of [head - 1, head + 1]) {
      const { bytes, whole } = codec.encodeAfter(room, p)
      assert.ok(whole !== undefined)
      const before = Buffer.from(whole)
      const value = enc.encode(p.id, p.to, p.from, exp, bytes, whole)
      assert.notEqual(value, whole)
      assert.deepEqual(Buffer.from(value), Buffer.from(ref))
      assert.deepEqual(Buffer.from(whole), before, 'nothing written into a buffer that does not fit')
    }
    const other = codec.encodeAfter(head, p)
    const value = enc.encode(p.id, p.to, p.from, exp, encodePacket(p), other.whole)
    assert.deepEqual(Buffer.from(value), Buffer.from(ref), 'a whole of another buffer than the packet\'s is not used')
  })
})

describe('store - outbox value encoder against its reference', () => {
  const ids = [ulid(), '', 'x', 'a'.repeat(255), 'é', 'id-😀', '\ud800lone', '\x7f\x00\x01', 'ü'.repeat(127)]
  const exps = [0, 1, -1, 1.5, Date.now(), Date.now() + 7 * 86_400_000, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Infinity, -Infinity, NaN, -0]
  const packets = [new Uint8Array(0), new Uint8Array([1, 2, 3]), new Uint8Array(700).fill(9)]

  it('encode (copy and in place) is byte for byte entryValueReference, for ASCII and other ids, every kind of expiry', () => {
    const codec = new PacketCodec()
    const enc = new EntryValueEncoder()
    for (const id of ids) {
      for (const exp of exps) {
        for (const pk of packets) {
          for (const [to, from] of [[a, b], [b, a], ['é-to', 'from-😀']]) {
            const ref = Buffer.from(entryValueReference(id, to, from, exp, pk))
            assert.deepEqual(Buffer.from(enc.encode(id, to, from, exp, pk)), ref, `${JSON.stringify(id)} ${exp}`)
            assert.equal(enc.headLength(id, to, from) + pk.byteLength, ref.byteLength)
            const back = decodeEntryValue(ref)
            assert.deepEqual({ i: back.i, to: back.to, from: back.from }, { i: new TextDecoder().decode(new TextEncoder().encode(id)), to, from })
            assert.ok(Object.is(back.exp, exp) || (Number.isNaN(exp) && Number.isNaN(back.exp)))
          }
        }
      }
    }
    const p = PACKETS[1]
    for (const id of ids) {
      const q = { ...p, id }
      const { bytes, whole } = codec.encodeAfter(enc.headLength(id, q.to, q.from), { ...p, id: p.id })
      const value = enc.encode(id, q.to, q.from, 42.5, bytes, whole)
      assert.equal(value, whole)
      assert.deepEqual(Buffer.from(value), Buffer.from(entryValueReference(id, q.to, q.from, 42.5, bytes)))
    }
  })

  it('an id of more than 255 bytes is refused by both', () => {
    for (const id of ['a'.repeat(256), 'é'.repeat(128)]) {
      assert.throws(() => new EntryValueEncoder().encode(id, a, b, 1, new Uint8Array(1)), /too long/)
      assert.throws(() => entryValueReference(id, a, b, 1, new Uint8Array(1)), /too long/)
    }
  })
})
