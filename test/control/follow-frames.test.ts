// The binary follow framing on its own: pages round-trip, the from/to reader
// agrees with dag-cbor, and the client's reply reader splits JSON lines and
// binary frames the same however the bytes are chunked.
import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { ReplyReader } from '../../src/control/client.js'
import { DIRECT_BYTES } from '../../src/control/line-frame-splitter.js'
import { FollowFrameBuilder } from '../../src/control/follow-frame-builder.js'
import { decodeFollowPage, eachFollowEntry, encodeFollowPage, encodeFollowValues, followPageLast, FRAME_HEAD, partiesOf, renderFollowPage, VALUE_HEADER } from '../../src/control/follow-frames.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { encodePacket } from '../../src/packet/codec.js'
import { renderEntry, type PacketEntry } from '../../src/packet/render.js'
import type { Packet } from '../../src/packet/types.js'

const A = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'
const B = 'did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG'

function packet (i: number, extra: Partial<Packet> = {}): Packet {
  return { id: `01M8RWT6PBZDJ9P45D9JGK${String(i).padStart(4, '0')}`, from: i % 2 === 0 ? A : B, to: B, from_name: i % 2 === 0 ? 'al' : 'bo', to_name: 'bo', signal: 'MESSAGE', scope: { files: ['x'], zone: 'project' }, payload: { text: `${i} "é" ${'z'.repeat(i % 50)}`, context: 'ctx' }, ts: 1_796_000_000_000 + i, ...extra }
}

function entries (n: number): PacketEntry[] {
  return Array.from({ length: n }, (_, i) => ({ seq: i + 1, received: 1_796_000_000_500 + i, packet: encodePacket(packet(i, i % 3 === 0 ? { session_id: `s${i}`, priority: 'high' } : {})) }))
}

describe('control - binary follow frames', () => {
  it('a page renders to exactly what renderEntry gives for its entries, with the host labels (and none for unknown ids)', () => {
    const es = entries(120)
    const label = (id: string): string => id === A ? 'alice-here' : id
    const body = encodeFollowPage(es, label).subarray(FRAME_HEAD)
    assert.deepEqual(renderFollowPage(body), es.map((e) => renderEntry(e, label)))
    const { labels } = decodeFollowPage(body)
    assert.deepEqual([...labels], [[A, 'alice-here']])
    assert.deepEqual([...eachFollowEntry(body)], renderFollowPage(body), 'one at a time, the same')
    assert.throws(() => [...eachFollowEntry(body.subarray(0, body.length - 1))], { name: 'MalformedFrameError' })
    assert.throws(() => [...eachFollowEntry(Buffer.concat([body, Buffer.from([0])]))], { name: 'MalformedFrameError' })
    assert.equal(followPageLast(body), 120, 'the last seq, by lengths alone')
    assert.equal(followPageLast(encodeFollowPage([], label).subarray(FRAME_HEAD)), undefined)
    assert.throws(() => followPageLast(body.subarray(0, body.length - 1)), { name: 'MalformedFrameError' })
  })

  it('partiesOf reads from and to as dag-cbor does', () => {
    for (const e of entries(40)) {
      const p = cbor.decode<Packet>(e.packet)
      assert.deepEqual(partiesOf(e.packet), [p.from, p.to])
    }
    assert.equal(partiesOf(new Uint8Array([0xff])), undefined)
  })

  it('a page made from stored values equals the page of their entries, byte for byte, also for packets the fast id reader leaves to partiesOf', () => {
    const value = (e: PacketEntry): Uint8Array => {
      const v = Buffer.alloc(VALUE_HEADER + e.packet.byteLength)
      v[0] = 1; v.writeDoubleBE(e.received, 1); v.set(e.packet, VALUE_HEADER)
      return v
    }
    const text = (s: string): number[] => { const b = [...Buffer.from(s)]; return [0x60 + b.length, ...b] }
    const odd = [
      cbor.encode({ zz: 1, a: 'x', from: B, to: A }), // other keys before, between and after to and from
      new Uint8Array([0xa2, ...text('from'), ...text(A), ...text('\ufeffto'), ...text(B)]), // a BOM key
      new Uint8Array([0xa1, ...text('from'), ...text(A)]), // no to
      new Uint8Array([0xa2, ...text('to'), ...text(B), ...text('from'), 0x01]), // from not text
      new Uint8Array([0xff, 0x00]),
      new Uint8Array(0)
    ]
    const es: PacketEntry[] = [...entries(50), ...odd.map((packet, k) => ({ seq: 51 + k, received: 1_796_000_001_000.25 + k, packet }))]
    for (const label of [(id: string): string => id === A ? 'alice-here' : id === B ? 'böb' : id, (id: string): string => id]) {
      for (const page of [es, es.slice(0, 1), es.slice(50), es.slice(2, 3), []]) {
        assert.deepEqual(Buffer.from(encodeFollowValues(page.map((e) => e.seq), page.map(value), label)), Buffer.from(encodeFollowPage(page, label)))
      }
    }
  })

  it('a frame built one value at a time (inbox.read) equals encodeFollowValues of the same values, byte for byte: growing buffers, labels past the reserve, empty pages, values of another format refused', () => {
    const value = (seq: number, packet: Uint8Array): Uint8Array => {
      const v = Buffer.alloc(VALUE_HEADER + packet.byteLength)
      v[0] = 1; v.writeDoubleBE(1_796_000_000_000.5 + seq, 1); v.set(packet, VALUE_HEADER)
      return v
    }
    // 150 distinct senders: their labels (~9 KiB) do not fit the 4 KiB kept in front of the entries
    const many = Array.from({ length: 150 }, () => generateNodeKey().id)
    const pages: Array<{ what: string, values: Uint8Array[] }> = [
      { what: 'alike', values: entries(300).map((e) => value(e.seq, e.packet)) },
      // small first, then large: the first buffer (sized for the first value) grows
      { what: 'growing', values: Array.from({ length: 60 }, (_, i) => value(i + 1, encodePacket(packet(i, { payload: { text: 'y'.repeat(i < 5 ? 1 : 3000 + i) } })))) },
      { what: 'many labels', values: many.map((from, i) => value(i + 1, encodePacket(packet(i, { from })))) },
      { what: 'one', values: [value(7, encodePacket(packet(7)))] },
      { what: 'empty', values: [] }
    ]
    const labels = [(id: string): string => id === A ? 'alice-here' : id === B ? 'böb' : id.endsWith('a') ? id : `n-${id.slice(-3)}`, (id: string): string => id]
    for (const label of labels) {
      for (const { what, values } of pages) {
        const seqs = values.map((v, k) => k + 1)
        const ref = Buffer.from(encodeFollowValues(seqs, values, label))
        for (const [entries, maxBytes] of [[1, Number.POSITIVE_INFINITY], [values.length, Number.POSITIVE_INFINITY], [10_000, 20_000], [10_000, 15 * 2 ** 20]]) {
          const b = new FollowFrameBuilder(label, Buffer.allocUnsafe, entries, maxBytes)
          for (let k = 0; k < values.length; k++) assert.equal(b.add(seqs[k], values[k]), true)
          assert.deepEqual(Buffer.from(b.finish()), ref, `${what}, ${entries} entries expected, ${maxBytes} bytes`)
        }
      }
    }
    const b = new FollowFrameBuilder((id) => id)
    const v = value(1, encodePacket(packet(1)))
    assert.equal(b.add(1, v), true)
    assert.equal(b.add(2, cbor.encode({ r: 1, p: encodePacket(packet(2)) })), false, 'the old format is left to the reference')
    assert.deepEqual(Buffer.from(b.finish()), Buffer.from(encodeFollowValues([1], [v], (id) => id)), 'and nothing of it was added')
  })

  it('a page whose packets share their layout (the reader that skips a packet equal to the last one outside its data) names what each packet alone names, in the same order; valid packets as the reference does', () => {
    const C = 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH'
    const ids = [A, B, C, 'x', '']
    let seed = 7
    const rand = (n: number): number => { seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648; return seed % n }
    const value = (seq: number, packet: Uint8Array): Uint8Array => {
      const v = Buffer.alloc(VALUE_HEADER + packet.byteLength)
      v[0] = 1; v.writeDoubleBE(1_796_000_000_000 + seq, 1); v.set(packet, VALUE_HEADER)
      return v
    }
    // runs of packets alike but for their id, ts (small, 1-, 2-, 4-, 8-byte integers) and text, from and to changing now and then
    const valid: Uint8Array[] = []
    let from = A
    let to = B
    for (let i = 0; i < 600; i++) {
      if (rand(10) === 0) from = ids[rand(3)]
      if (rand(12) === 0) to = ids[rand(3)]
      const ts = [rand(24), 100 + rand(100), 1000 + rand(60_000), 70_000 + rand(1_000_000), 1_796_000_000_000 + rand(1000)][rand(5)]
      valid.push(encodePacket({ ...packet(i), from, to, ts, id: `01M8RWT6PBZDJ9P45D9JGK${String(rand(10_000)).padStart(4, '0')}`, ...(rand(20) === 0 ? { session_id: 's' } : {}) }))
    }
    const named = (id: string): string => `n:${id}`
    const labelsOf = (page: Uint8Array): Array<[string, string]> => [...decodeFollowPage(page.subarray(FRAME_HEAD)).labels]
    const alone = (values: Uint8Array[]): Array<[string, string]> => {
      const seen = new Map<string, string>()
      for (const v of values) for (const [id, name] of labelsOf(encodeFollowValues([1], [v], named))) if (!seen.has(id)) seen.set(id, name)
      return [...seen]
    }
    for (const label of [named, (id: string): string => id === C ? 'cee' : id]) {
      const page = valid.map((p, k) => ({ seq: k + 1, received: 1_796_000_000_000 + k + 1, packet: p }))
      assert.deepEqual(Buffer.from(encodeFollowValues(page.map((e) => e.seq), valid.map((p, k) => value(k + 1, p)), label)), Buffer.from(encodeFollowPage(page, label)))
    }
    // copies of a packet with one or two bytes of its first 160 changed (heads, keys, lengths, ids, data), each after its original
    for (let round = 0; round < 3000; round++) {
      const base = valid[rand(valid.length)]
      const bent = Uint8Array.from(base)
      for (let f = 1 + rand(2); f > 0; f--) bent[rand(Math.min(160, bent.length))] ^= 1 << rand(8)
      const values = [value(1, base), value(2, bent), value(3, base), value(4, bent)]
      const page = encodeFollowValues([1, 2, 3, 4], values, named)
      assert.deepEqual(labelsOf(page), alone(values), `round ${round}`)
      assert.deepEqual(decodeFollowPage(page.subarray(FRAME_HEAD)).entries.map((e) => Buffer.from(e.packet)), [base, bent, base, bent].map((b) => Buffer.from(b)))
    }
  })

  it('a cut page is refused with a named error', () => {
    const body = encodeFollowPage(entries(3), (id) => id).subarray(FRAME_HEAD)
    assert.throws(() => decodeFollowPage(body.subarray(0, body.length - 1)), { name: 'MalformedFrameError' })
  })

  it('the reply reader gives the same lines and frames for any chunking', () => {
    const frame = (id: number, body: Uint8Array): Buffer => {
      const b = Buffer.alloc(FRAME_HEAD + body.length)
      b.writeUInt32BE(id, 1); b.writeUInt32BE(body.length, 5); b.set(body, FRAME_HEAD)
      return b
    }
    const big = Buffer.alloc(200_000, 7)
    const stream = Buffer.concat([Buffer.from('{"id":1,"result":"é"}\n'), frame(2, Buffer.from([1, 2, 3])), frame(2, big), Buffer.from('{"id":2,"end":true}\n'), frame(3, new Uint8Array(0)), Buffer.from('{"id":4,"result":"ü ok"}\n')])
    const run = (sizes: (i: number) => number): string[] => {
      const out: string[] = []
      const r = new ReplyReader((line) => out.push(line), (id, body) => out.push(`frame ${id} ${body.length} ${Buffer.from(body).toString('hex').slice(0, 12)}`))
      for (let at = 0, i = 0; at < stream.length; i++) { const n = Math.max(1, sizes(i)); r.push(stream.subarray(at, at + n)); at += n }
      return out
    }
    const whole = run(() => stream.length)
    assert.equal(whole.length, 6)
    assert.equal(whole[0], '{"id":1,"result":"é"}')
    for (const sizes of [() => 1, () => 7, (i: number) => (i * 7919) % 65_536, () => 65_536]) assert.deepEqual(run(sizes), whole)
  })

  it('a large frame received in place (the socket reading into readInto\'s buffer) gives what pushed chunks give, for any read sizes', () => {
    const frame = (id: number, body: Uint8Array): Buffer => {
      const b = Buffer.alloc(FRAME_HEAD + body.length)
      b.writeUInt32BE(id, 1); b.writeUInt32BE(body.length, 5); b.set(body, FRAME_HEAD)
      return b
    }
    const big = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 31) & 0xff))
    const stream = Buffer.concat([Buffer.from('{"id":1,"result":"é"}\n'), frame(2, big), frame(2, Buffer.from([9])), frame(5, big.subarray(0, DIRECT_BYTES - FRAME_HEAD)), Buffer.from('{"id":2,"end":true}\n'), frame(3, big.subarray(1)), Buffer.from('{"id":4,"result":"ü ok"}\n')])
    const seen = (out: string[]) => (id: number, body: Uint8Array): void => { out.push(`frame ${id} ${body.length} ${Buffer.from(body).toString('hex')}`) }
    const run = (sizes: (i: number) => number, inPlace: boolean | ((i: number) => boolean)): string[] => {
      const out: string[] = []
      const r = new ReplyReader((line) => out.push(line), seen(out))
      for (let at = 0, i = 0; at < stream.length; i++) {
        const n = Math.max(1, sizes(i))
        const into = (typeof inPlace === 'function' ? inPlace(i) : inPlace) ? r.readInto() : undefined
        if (into !== undefined) {
          const k = Math.min(n, into.length, stream.length - at)
          stream.copy(into, 0, at, at + k)
          r.filled(k)
          at += k
        } else {
          r.push(Buffer.from(stream.subarray(at, at + n)))
          at += n
        }
      }
      return out
    }
    const whole = run(() => stream.length, false)
    assert.equal(whole.length, 7)
    assert.equal(whole[1], `frame 2 ${big.length} ${big.toString('hex')}`)
    for (const inPlace of [false, true]) {
      for (const sizes of [() => 1000, (i: number) => 1 + (i * 7919) % 65_536, () => 65_536, () => 300_000]) assert.deepEqual(run(sizes, inPlace), whole, `in place ${String(inPlace)}`)
    }
    // a reader that was given the frame's buffer and is then pushed chunks still gives the same
    const mixed = run((i) => 1 + (i * 104_729) % 200_000, (i) => i % 3 !== 1)
    assert.deepEqual(mixed, whole)
  })
})
