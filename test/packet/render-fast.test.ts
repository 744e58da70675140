// The render-only reader (render-fast.ts) against its reference, the direct
// decoder's packet rendered by renderPacket: for every packet shape the
// decoder tests make and for their mutations, the same rendered entry (values
// and key order) where the decoder takes the bytes, and undefined exactly
// where it does not (the caller then renders the reference way).
import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { EntryRenderer } from '../../src/control/follow-frames.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { encodePacket } from '../../src/packet/codec.js'
import { PacketDecoder } from '../../src/packet/decode-fast.js'
import { renderEntry, renderPacket, type PacketEntry, type RenderedPacket } from '../../src/packet/render.js'
import { RenderDecoder } from '../../src/packet/render-fast.js'
import { SIGNALS, type Packet, type Payload, type Signal } from '../../src/packet/types.js'
import { seeded } from '../../src/util/seeded.js'
import { payloadFor } from '../utils/payloads.js'
import { ulid } from '../../src/util/ulid.js'

const rnd = seeded(0x2e4d)
const int = (n: number): number => Math.floor(rnd() * n)
const pick = <T>(list: readonly T[]): T => list[int(list.length)]
const chance = (p: number): boolean => rnd() < p
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => int(256))
const PIECES = ['a', 'Z', '0', ' ', '\n', '"', 'é', 'ß', '中', '\ufffd', '😀', 'x\ufeff', '\u0000']
function text (max: number): string {
  let s = ''
  for (let n = int(max + 1); s.length < n;) s += pick(PIECES)
  return s
}
const nonEmpty = (max: number): string => text(max - 1) + 'x'
const ids = Array.from({ length: 3 }, () => generateNodeKey().id)
const json = (): unknown => pick([text(30), int(1000), -int(1000), true, false, null, [text(5), int(9)], { b: text(5), a: [1, { c: null }] }])

function payload (signal: Signal): Payload {
  const t = (): string => chance(0.1) ? '' : text(600)
  const v = (): Payload['context'] => (chance(0.3) ? json() : t()) as Payload['context']
  const options = (): Payload['options'] => Array.from({ length: 1 + int(4) }, () => chance(0.5) ? text(20) : { id: nonEmpty(8), label: text(10), ...(chance(0.5) ? { description: text(10) } : {}) })
  return payloadFor(signal, { t, v: v, options, chance, pick })
}

/** A random valid packet of any shape: every optional field, proofs of 0..16 byte strings of many sizes. */
function randomPacket (): Packet {
  const signal = pick(SIGNALS)
  const p: Packet = { id: ulid(), from: pick(ids), to: pick(ids), signal, scope: { files: Array.from({ length: int(4) }, () => text(30)), zone: pick(['kernel', 'project', 'personal'] as const) }, payload: payload(signal), ts: chance(0.3) ? pick([0, 23, 24, 255, 65536, 2 ** 32, Number.MAX_SAFE_INTEGER]) : Date.now() + int(1e6) }
  const o = p as unknown as Record<string, unknown>
  for (const k of ['from_name', 'to_name', 'session_id', 'conversation_id', 'in_reply_to', 'broadcast']) if (chance(0.4)) o[k] = nonEmpty(20)
  if (chance(0.3)) p.return_to = pick(ids)
  if (chance(0.2)) p.group_id = pick(ids)
  if (chance(0.3)) p.priority = pick(['low', 'normal', 'high'] as const)
  if (chance(0.3)) p.requires_reply = chance(0.5)
  if (chance(0.2)) p.no_receipt = chance(0.5)
  if (chance(0.6)) {
    const list = (): Uint8Array[] => Array.from({ length: int(17) }, () => bytes(pick([0, 1, 23, 24, 200, 321, 3000])))
    p.proof = {}
    if (chance(0.7)) p.proof.grants = list()
    if (chance(0.5)) p.proof.lineage = list()
  }
  return p
}

/** labels: one id known by another name, the others not */
const label = (id: string): string => id === ids[0] ? 'known-here' : id

/** What the client rendered before render-fast.ts: the direct decoder's packet, else undefined (the reference path). */
function reference (e: PacketEntry): RenderedPacket | undefined {
  const p = new PacketDecoder().decode(e.packet)
  return p === undefined ? undefined : renderPacket(p, e, label)
}

function assertSame (fast: RenderDecoder, packet: Uint8Array, what: string): 'taken' | 'left' {
  const e: PacketEntry = { seq: 1 + int(1e6), received: Date.now() + rnd(), packet }
  const want = reference(e)
  const got = fast.render(e, label)
  assert.deepEqual(got, want, what)
  if (want !== undefined) assert.equal(JSON.stringify(got), JSON.stringify(want), `${what}: key order`)
  return want === undefined ? 'left' : 'taken'
}

/** The packet as a plain object with values that may break the packet's rules (encoded by dag-cbor, canonical order). */
function tweak (p: Packet): Record<string, unknown> {
  const o: Record<string, unknown> = { ...p }
  switch (int(12)) {
    case 0: delete o[pick(['id', 'from', 'to', 'signal', 'payload', 'ts', 'scope'])]; break
    case 1: o.proof = { grants: Array.from({ length: 17 }, () => bytes(3)) }; break
    case 2: o.proof = { grants: [bytes(4), 'not bytes'] }; break
    case 3: o.proof = { tokens: [bytes(4)] }; break
    case 4: o.proof = { lineage: bytes(5) }; break
    case 5: o.proof = [bytes(2)]; break
    case 6: o.unknown = 1; break
    case 7: o.signal = pick(SIGNALS); break
    case 8: o.priority = 'urgent'; break
    case 9: o.from = 'did:key:z6Mknot-a-key'; break
    case 10: o.from_name = ''; break
    default: o.proof = { lineage: [], grants: [] }
  }
  return o
}

describe('packet - render-only reader against the direct decoder + renderPacket', () => {
  it('renders thousands of random valid packets of every shape as the reference does (values, key order)', () => {
    const fast = new RenderDecoder()
    for (let i = 0; i < 3000; i++) assert.equal(assertSame(fast, encodePacket(randomPacket()), `packet ${i}`), 'taken')
  })

  it('reads Buffers and views at an offset as the reference does', () => {
    const fast = new RenderDecoder()
    for (let i = 0; i < 200; i++) {
      const b = encodePacket(randomPacket())
      const buf = Buffer.alloc(b.length + 13)
      buf.set(b, 13)
      assert.equal(assertSame(fast, buf.subarray(13), `buffer ${i}`), 'taken')
    }
  })

  it('leaves exactly the bytes the reference leaves: broken rules, proofs, flips, cuts and trailing bytes', () => {
    const fast = new RenderDecoder()
    const seen = { taken: 0, left: 0 }
    for (let i = 0; i < 3000; i++) {
      const p = randomPacket()
      const good = encodePacket(p)
      let b: Uint8Array
      switch (i % 4) {
        case 0: b = cbor.encode(tweak(p)); break
        case 1: b = Uint8Array.from(good); for (let m = 0, n = 1 + int(3); m < n; m++) b[int(b.length)] ^= 1 << int(8); break
        case 2: b = good.subarray(0, int(good.length)); break
        default: b = Uint8Array.from([...good, int(256)])
      }
      seen[assertSame(fast, b, `mutation ${i}`)]++
    }
    assert.ok(seen.taken > 100 && seen.left > 100, `both outcomes reached: ${JSON.stringify(seen)}`)
  })

  it('EntryRenderer: the reference path for what the render-only reader leaves (a non-canonical packet dag-cbor reads)', () => {
    const p = randomPacket()
    const packet = cbor.encode({ ...p, unknown: 1 })
    const e: PacketEntry = { seq: 7, received: 1, packet }
    assert.equal(new RenderDecoder().render(e, label), undefined)
    assert.deepEqual(new EntryRenderer().render(e, label), renderEntry(e, label))
  })
})
