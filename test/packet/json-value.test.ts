// Payload JSON values (packet schema 2): context / decision / result as any
// JSON value, options as strings or {id, label, description?}. Encoded
// canonically (sorted keys, the same bytes as dag-cbor), decoded by the
// direct decoder exactly as by the reference, bounded in depth and size with
// named errors; schema-1 packets (string fields) still decode and render.
import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { channelEvent } from '../../src/mcp/render.js'
import { MAX_PACKET_BYTES, decodePacket, decodePacketViaDagCbor, encodePacket } from '../../src/packet/codec.js'
import { decodeCanonicalPacket } from '../../src/packet/decode-fast.js'
import { MAX_JSON_DEPTH } from '../../src/packet/fields.js'
import type { JsonValue } from '../../src/packet/json-value.js'
import { renderEntry } from '../../src/packet/render.js'
import { EntryJsonRenderer } from '../../src/packet/render-json.js'
import type { Packet, Payload, Signal } from '../../src/packet/types.js'
import { JsonBytes } from '../../src/util/json-bytes.js'
import { seeded } from '../../src/util/seeded.js'
import { ulid } from '../../src/util/ulid.js'

const A = generateNodeKey().id
const B = generateNodeKey().id
const label = (id: string): string => id

const rnd = seeded(0x15)
const int = (n: number): number => Math.floor(rnd() * n)
const pick = <T>(list: readonly T[]): T => list[int(list.length)]

const KEYS = ['a', 'b', 'files', 'notes', 'zz', 'é', '中文', 'x y', '"q"', '10', 'constructor', 'toString', '']
const SCALARS: JsonValue[] = [0, 1, 23, 24, -1, -24, -25, 65536, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5, -0.25, 1e300, true, false, null, '', 'text', 'é中😀', '\n"\\']

function randomValue (depth: number): JsonValue {
  if (depth >= 5 || int(3) === 0) return pick(SCALARS)
  if (int(2) === 0) return Array.from({ length: int(4) }, () => randomValue(depth + 1))
  const o: Record<string, JsonValue> = {}
  for (let i = int(5); i > 0; i--) o[pick(KEYS)] = randomValue(depth + 1)
  return o
}

function packet (signal: Signal, payload: Payload): Packet {
  return { id: ulid(), from: A, to: B, signal, scope: { files: [], zone: 'project' }, payload, ts: 1_700_000_000_000 }
}

function nested (levels: number): JsonValue {
  let v: JsonValue = 'leaf'
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v }
  return v
}

function byteJson (bytes: Uint8Array): string {
  const out = new JsonBytes(64)
  new EntryJsonRenderer(label).write({ seq: 1, packet: bytes, received: 5 }, out)
  return Buffer.from(out.bytes()).toString()
}

describe('packet - payload JSON values (schema 2)', () => {
  it('random structured payloads: dag-cbor bytes, direct decoder = reference, re-encoding byte-identical, rendered JSON the same both ways', () => {
    let direct = 0
    for (let i = 0; i < 2000; i++) {
      const sig = pick(['SPAWN', 'RETURN', 'HANDOFF', 'MESSAGE', 'ERROR'] as const)
      const v = randomValue(0)
      const payload: Payload = sig === 'RETURN' ? { result: v } : sig === 'HANDOFF' ? { context: v, decision: randomValue(0) } : { context: v }
      const p = packet(sig, payload)
      const bytes = encodePacket(p)
      assert.deepEqual(Buffer.from(bytes), Buffer.from(cbor.encode(p as unknown as Record<string, unknown>)), 'the canonical bytes are dag-cbor\'s')
      const ref = decodePacketViaDagCbor(bytes)
      assert.deepEqual(decodePacket(bytes), ref)
      const fast = decodeCanonicalPacket(bytes)
      if (fast !== undefined) { direct++; assert.deepEqual(fast, ref) }
      assert.deepEqual(Buffer.from(encodePacket(ref)), Buffer.from(bytes), 'decode then encode gives the same bytes (signatures, dedup)')
      assert.equal(byteJson(bytes), JSON.stringify(renderEntry({ seq: 1, packet: bytes, received: 5 }, label)))
    }
    assert.ok(direct > 500, `the direct decoder took structured payloads (${direct} of 2000)`)
  })

  it('a SPAWN with context {files, notes} round-trips byte-identically through encode/decode and the rendered JSON', () => {
    const context = { notes: { why: 'refactor', risk: ['low', 2, null, true], nested: { deeper: { n: -7 } } }, files: ['src/a.ts', 'src/b.ts'] }
    const p = packet('SPAWN', { context, text: 'job-1' })
    const bytes = encodePacket(p)
    assert.ok(decodeCanonicalPacket(bytes) !== undefined, 'the direct decoder reads it')
    const back = decodePacket(bytes)
    assert.deepEqual(back.payload.context, context)
    const rendered = JSON.parse(byteJson(bytes)) as { payload: Payload }
    assert.deepEqual(rendered.payload.context, context, 'inbox JSON carries the object, not a string')
    assert.deepEqual(Buffer.from(encodePacket({ ...p, payload: rendered.payload })), Buffer.from(bytes), 'the JSON, encoded again, gives the same bytes')
    const ev = channelEvent(renderEntry({ seq: 1, packet: bytes, received: 5 }, label) as Parameters<typeof channelEvent>[0])
    assert.ok(ev.content.includes(`context: ${JSON.stringify(back.payload.context)}`), `compact JSON in the channel: ${ev.content}`)
  })

  it(`nesting: ${MAX_JSON_DEPTH} levels pass, ${MAX_JSON_DEPTH + 1} are refused with PAYLOAD_TOO_DEEP on encode and on decode`, () => {
    const ok = encodePacket(packet('SPAWN', { context: nested(MAX_JSON_DEPTH) }))
    assert.deepEqual(decodePacket(ok).payload.context, nested(MAX_JSON_DEPTH))
    const deep = packet('SPAWN', { context: nested(MAX_JSON_DEPTH + 1) })
    assert.throws(() => encodePacket(deep), { name: 'PayloadTooDeepError', code: 'PAYLOAD_TOO_DEEP' })
    const crafted = cbor.encode(deep as unknown as Record<string, unknown>) // skips the encoder's check
    assert.equal(decodeCanonicalPacket(crafted), undefined)
    assert.throws(() => decodePacket(crafted), { name: 'PayloadTooDeepError', code: 'PAYLOAD_TOO_DEEP' })
    assert.throws(() => decodePacketViaDagCbor(crafted), { name: 'PayloadTooDeepError' })
  })

  it('a payload over the packet bound is refused with PACKET_TOO_LARGE on encode and decode', () => {
    const big = { chunks: Array.from({ length: 300 }, (_, i) => `${i}:${'x'.repeat(2000)}`) }
    const p = packet('SPAWN', { context: big })
    assert.throws(() => encodePacket(p), { name: 'PacketTooLargeError', code: 'PACKET_TOO_LARGE' })
    const crafted = cbor.encode(p as unknown as Record<string, unknown>)
    assert.ok(crafted.byteLength > MAX_PACKET_BYTES)
    assert.throws(() => decodePacket(crafted), { name: 'PacketTooLargeError' })
  })

  it('refuses what JSON cannot say (bytes, undefined inside, non-finite numbers) with INVALID_PACKET', () => {
    for (const bad of [{ b: new Uint8Array(2) }, [Number.NaN], { x: Infinity }]) {
      assert.throws(() => encodePacket(packet('SPAWN', { context: bad as unknown as JsonValue })), { code: 'INVALID_PACKET' })
    }
    const crafted = cbor.encode({ ...packet('SPAWN', { context: 'x' }), payload: { context: { b: new Uint8Array(3) } } } as unknown as Record<string, unknown>)
    assert.throws(() => decodePacket(crafted), { code: 'INVALID_PACKET' })
  })

  it('options: strings and {id, label, description?}, checked both ways', () => {
    const options = ['plain', { id: 'a', label: 'Option A' }, { id: 'b', label: 'B', description: 'the second' }]
    const bytes = encodePacket(packet('ESCALATE', { options, text: 'pick one' }))
    assert.deepEqual(decodeCanonicalPacket(bytes)?.payload.options, options)
    assert.deepEqual(decodePacket(bytes).payload.options, options)
    const ev = channelEvent(renderEntry({ seq: 1, packet: bytes, received: 5 }, label) as Parameters<typeof channelEvent>[0])
    assert.match(ev.content, /options: plain \| Option A \[a\] \| B \[b\] \(the second\)/)
    for (const bad of [[{ label: 'no id' }], [{ id: 'x', label: 'y', extra: 1 }], [{ id: '', label: 'y' }], [3]]) {
      assert.throws(() => encodePacket(packet('ESCALATE', { options: bad as never })), { code: 'INVALID_PACKET' })
    }
  })

  it('a schema-1 packet (string fields, as stored before) still decodes and renders, on the direct path', () => {
    const old = cbor.encode({ id: ulid(), from: A, to: B, signal: 'HANDOFF', scope: { files: [], zone: 'project' }, payload: { context: 'ctx as text', decision: 'go' }, ts: 1 })
    const p = decodeCanonicalPacket(old)
    assert.ok(p !== undefined, 'string fields keep the direct decoder\'s string path')
    assert.deepEqual(p.payload, { context: 'ctx as text', decision: 'go' })
    assert.deepEqual(JSON.parse(byteJson(old)).payload, { context: 'ctx as text', decision: 'go' })
    const ev = channelEvent(renderEntry({ seq: 1, packet: old, received: 5 }, label) as Parameters<typeof channelEvent>[0])
    assert.equal(ev.content, '[HANDOFF] context: ctx as text\ndecision: go')
  })
})
