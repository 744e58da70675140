// The field table drives the validator, the direct decoder, the renderers and
// the send parameters: each field it declares is handled the same way by all
// of them, and the caches that speed them up belong to instances.
import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { checkSendParams, sendSchema } from '../../src/control/send-params.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { CborCursor, MAJOR_TEXT, MAJOR_UINT } from '../../src/packet/cbor-cursor.js'
import { PacketCodec, decodePacket, decodePacketViaDagCbor, encodePacket } from '../../src/packet/codec.js'
import { PacketDecoder } from '../../src/packet/decode-fast.js'
import { FIELDS, FIELD_NAMES, RENDERED_FIELDS, SEND_FIELDS, type FieldSpec } from '../../src/packet/fields.js'
import { renderEntry } from '../../src/packet/render.js'
import type { Packet } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'

const a = generateNodeKey().id
const b = generateNodeKey().id

function base (): Packet {
  return { id: ulid(), from: a, to: b, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: 1 }
}

/** A valid value of each kind, and one the validator refuses. */
function sample (spec: FieldSpec): { good: unknown, bad: unknown } {
  switch (spec.kind) {
    case 'string': return { good: 'x'.repeat(256), bad: 'x'.repeat(257) }
    case 'nodeId': return { good: a, bad: 'not-a-node' }
    case 'enum': return { good: spec.values[spec.values.length - 1], bad: 'none-of-them' }
    case 'bool': return { good: false, bad: 'yes' }
  }
}

describe('packet - the field table', () => {
  it('every declared field round-trips alone, through the direct decoder and the reference alike', () => {
    for (const key of FIELD_NAMES) {
      const p = { ...base(), [key]: sample(FIELDS[key]).good } as Packet
      const bytes = encodePacket(p)
      assert.deepEqual(new PacketDecoder().decode(bytes), p, key)
      assert.deepEqual(decodePacketViaDagCbor(bytes), p, key)
    }
  })

  it('every declared field is refused with its own name when out of bounds, by encoder and decoder', () => {
    for (const key of FIELD_NAMES) {
      const bad = { ...base(), [key]: sample(FIELDS[key]).bad }
      assert.throws(() => encodePacket(bad as Packet), (err: Error) => err.name === 'InvalidPacketError' && err.message.includes(`packet.${key}`), key)
      const bytes = cbor.encode(bad)
      assert.equal(new PacketDecoder().decode(bytes), undefined, key)
      assert.throws(() => decodePacket(bytes), { name: 'InvalidPacketError' }, key)
    }
  })

  it('the rendered JSON copies exactly the fields marked render, in the table order', () => {
    const p = base() as unknown as Record<string, unknown>
    for (const key of FIELD_NAMES) p[key] = sample(FIELDS[key]).good
    const r = renderEntry({ seq: 1, packet: encodePacket(p as unknown as Packet), received: 2 }, (id) => id)
    const keys = Object.keys(r)
    assert.deepEqual(keys.filter((k) => (FIELD_NAMES as readonly string[]).includes(k)), RENDERED_FIELDS)
    assert.equal(r.from, p.from_name, 'carried names are rendered through from/to')
  })

  it('the send parameters take exactly the fields marked send, with their bounds', () => {
    const shape = Object.keys(sendSchema.shape)
    for (const key of FIELD_NAMES) assert.equal(shape.includes(key), (SEND_FIELDS as readonly string[]).includes(key), key)
    for (const key of SEND_FIELDS) {
      const spec = FIELDS[key]
      const good = { as: 'a', to: 'b', [key]: sample(spec).good }
      assert.deepEqual(checkSendParams(good), sendSchema.parse(good), key)
      if (spec.kind !== 'nodeId') {
        const bad = { as: 'a', to: 'b', [key]: sample(spec).bad }
        assert.equal(checkSendParams(bad), undefined, key)
        assert.equal(sendSchema.safeParse(bad).success, false, key)
      }
    }
  })
})

describe('packet - per-instance caches and the shared CBOR cursor', () => {
  it('codecs and decoders keep their caches to themselves and give the same packets and bytes', () => {
    const one = new PacketCodec()
    const two = new PacketCodec()
    const packets = Array.from({ length: 20 }, (_, i) => ({ ...base(), from: i % 2 === 0 ? a : b, to: i % 2 === 0 ? b : a, payload: { text: 'y'.repeat(i * 4000) } }))
    for (const p of packets) {
      const bytes = one.encode(p)
      assert.deepEqual(Buffer.from(bytes), Buffer.from(encodePacket(p)))
      assert.deepEqual(Buffer.from(two.encode(p)), Buffer.from(bytes))
      assert.deepEqual(one.decode(bytes), p)
      assert.deepEqual(two.decode(bytes), decodePacketViaDagCbor(bytes))
    }
  })

  it('the cursor reads minimal heads only and never past the end', () => {
    const c = new CborCursor()
    c.reset(Uint8Array.from([0x18, 0x18, 0x19, 0x01, 0x00, 0x63, 0x61]))
    assert.equal(c.expect(MAJOR_UINT), 24)
    assert.equal(c.expect(MAJOR_UINT), 256)
    assert.equal(c.expect(MAJOR_TEXT), 3, 'a head is read even when its content is cut short; the reader checks the length')
    for (const bytes of [[0x18, 0x17], [0x19, 0x00, 0xff], [0x1a, 0x00, 0x00, 0xff, 0xff], [0x1b, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff], [0x1b, 0, 0x20, 0, 0, 0, 0, 0, 0], [0x1f], [0x19, 0x01], [0xf9, 0, 0], [0xf7]]) {
      c.reset(Uint8Array.from(bytes))
      assert.equal(c.next(), false, `refuses ${bytes.join(',')}`)
    }
    c.reset(Uint8Array.from([0xf4, 0xf5, 0xf6]))
    for (const arg of [20, 21, 22]) { assert.ok(c.next()); assert.equal(c.arg, arg) }
    assert.ok(c.done())
    assert.equal(c.next(), false)
    assert.equal(c.expect(MAJOR_UINT), -1)
  })
})
