import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { MAX_PACKET_BYTES, decodePacket, encodePacket } from '../../src/packet/codec.js'
import { SIGNALS, type Packet, type Signal } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'

const a = generateNodeKey().id
const b = generateNodeKey().id

function packet (over: Partial<Packet> = {}): Packet {
  return { id: ulid(), from: a, to: b, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: Date.now(), ...over }
}

function raw (value: Record<string, unknown>): Uint8Array {
  return cbor.encode(value)
}

describe('packet - codec and signal rules', () => {
  it('round-trips every field, deterministically', () => {
    const p = packet({ conversation_id: 'c1', in_reply_to: ulid(), priority: 'high', requires_reply: true, session_id: 's', return_to: a, from_name: 'alice', to_name: 'bob', scope: { files: ['a.ts'], zone: 'kernel' }, proof: { lineage: [new Uint8Array([1, 2])], grants: [new Uint8Array([3])] } })
    const bytes = encodePacket(p)
    assert.deepEqual(decodePacket(bytes), p)
    assert.deepEqual(encodePacket(decodePacket(bytes)), bytes)
  })

  const accepted: Array<[Signal, Packet['payload']]> = [
    ['SPAWN', { context: 'do x', text: 'please' }],
    ['RETURN', { result: 'done' }],
    ['BLOCKED_ON', { context: 'waiting on db' }],
    ['CHECKPOINT', { context: 'snapshot' }],
    ['HANDOFF', { context: 'state', decision: 'use plan b' }],
    ['ESCALATE', { options: ['a', 'b'], text: 'which?' }],
    ['ERROR', { context: 'stack' }],
    ['MESSAGE', { text: 'hi', context: 'ctx' }],
    ['MESSAGE', { context: 'only context' }]
  ]
  for (const [signal, payload] of accepted) {
    it(`accepts ${signal} with ${Object.keys(payload).join('+')}`, () => {
      assert.equal(decodePacket(encodePacket(packet({ signal, payload }))).signal, signal)
    })
  }

  const rejected: Array<[string, Signal, Packet['payload'], string]> = [
    ['a RETURN with context', 'RETURN', { result: 'r', context: 'source' }, 'SignalPayloadError'],
    ['a RETURN without result', 'RETURN', {}, 'SignalPayloadError'],
    ['an ESCALATE without options', 'ESCALATE', { text: 'help' }, 'SignalPayloadError'],
    ['an ESCALATE with context', 'ESCALATE', { options: ['a'], context: 'full context' }, 'SignalPayloadError'],
    ['a SPAWN without context', 'SPAWN', { text: 'go' }, 'SignalPayloadError'],
    ['a HANDOFF without decision', 'HANDOFF', { context: 'c' }, 'SignalPayloadError'],
    ['a MESSAGE with result', 'MESSAGE', { text: 't', result: 'r' }, 'SignalPayloadError'],
    ['an empty MESSAGE', 'MESSAGE', {}, 'SignalPayloadError'],
    ['an ERROR with text', 'ERROR', { context: 'c', text: 't' }, 'SignalPayloadError']
  ]
  for (const [what, signal, payload, name] of rejected) {
    it(`rejects ${what} on encode and on decode (${name})`, () => {
      assert.throws(() => encodePacket(packet({ signal, payload })), { name })
      assert.throws(() => decodePacket(raw({ ...packet(), signal, payload })), { name })
    })
  }

  it('rejects an unknown signal by name', () => {
    assert.throws(() => decodePacket(raw({ ...packet(), signal: 'SHOUT' })), { name: 'UnknownSignalError', message: /unknown signal: SHOUT/ })
    assert.equal(SIGNALS.length, 8)
  })

  const malformed: Array<[string, Record<string, unknown>]> = [
    ['a missing id', { ...packet(), id: undefined }],
    ['a non-ULID id', { ...packet(), id: 'not-a-ulid' }],
    ['a from that is not a node id', { ...packet(), from: 'alice' }],
    ['a negative ts', { ...packet(), ts: -1 }],
    ['an unknown zone', { ...packet(), scope: { files: [], zone: 'secret' } }],
    ['an unknown payload field', { ...packet(), payload: { text: 'x', shell: 'rm -rf' } }],
    ['a non-boolean requires_reply', { ...packet(), requires_reply: 'yes' }],
    ['a bad priority', { ...packet(), priority: 'urgent' }],
    ['proof that is not bytes', { ...packet(), proof: { grants: ['token'] } }]
  ]
  for (const [what, value] of malformed) {
    it(`rejects ${what} (InvalidPacketError)`, () => {
      const clean = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined))
      assert.throws(() => decodePacket(raw(clean)), { name: 'InvalidPacketError' })
    })
  }

  it('rejects bytes that are not DAG-CBOR', () => {
    assert.throws(() => decodePacket(new Uint8Array([0xff, 0xfe, 0x00])), { name: 'InvalidPacketError' })
  })

  it('bounds the packet size on encode and decode', () => {
    const big = 'x'.repeat(256 * 1024 - 4)
    assert.throws(() => encodePacket(packet({ payload: { text: big, context: big } })), { name: 'PacketTooLargeError' })
    assert.throws(() => decodePacket(new Uint8Array(MAX_PACKET_BYTES + 1)), { name: 'PacketTooLargeError' })
  })
})
