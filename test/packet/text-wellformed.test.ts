// A packet string with a lone surrogate (half of a UTF-16 pair: no UTF-8
// form, DAG-CBOR would store U+FFFD for it) is refused with a named
// InvalidPacketError wherever it sits, by every encode path alike; surrogate
// pairs are text like any other.
import { strict as assert } from 'node:assert'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { PacketCodec, decodePacket, encodePacket } from '../../src/packet/codec.js'
import { textProblem } from '../../src/packet/json-value.js'
import type { Packet } from '../../src/packet/types.js'
import { InvalidPacketError } from '../../src/util/errors.js'
import { ulid } from '../../src/util/ulid.js'

const [A, B] = [generateNodeKey().id, generateNodeKey().id]
const base = (): Record<string, unknown> => ({ id: ulid(), from: A, to: B, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: 1 })

describe('packet - a lone surrogate is refused by name, never stored as U+FFFD', () => {
  it('textProblem names the first lone surrogate and its index, and passes pairs and one-byte text', () => {
    for (const ok of ['', 'plain', 'é ü', '中文', '😀', 'a😀b𝄞c', '\ufeff\ufffd', 'x'.repeat(70_000), '中'.repeat(70_000) + '😀']) assert.equal(textProblem(ok), undefined, JSON.stringify(ok).slice(0, 40))
    const cases: Array<[string, string, number]> = [
      ['\ud800', 'D800', 0], ['a\udfff', 'DFFF', 1], ['😀\ud83d', 'D83D', 2], ['\ude00\ud83d', 'DE00', 0], ['ab\ud83d\ud83d\ude00', 'D83D', 2], ['中'.repeat(5000) + '\udc00', 'DC00', 5000]
    ]
    for (const [s, unit, at] of cases) assert.equal(textProblem(s), `holds a lone surrogate (U+${unit}) at index ${at}: not valid Unicode text`)
  })

  it('every encode path refuses it with the same named error, in every kind of string a packet has', () => {
    const places: Array<[string, (p: Record<string, unknown>) => void]> = [
      ['packet.payload.text', (p) => { p.payload = { text: 'a\ud800' } }],
      ['packet.payload.context', (p) => { p.payload = { text: 'hi', context: { k: ['ok', 'x\udc00'] } } }],
      ['packet.payload.context key', (p) => { p.payload = { text: 'hi', context: { ['\ud801k']: 1 } } }],
      ['packet.payload.result', (p) => { p.signal = 'RETURN'; p.payload = { result: '\udbff' } }],
      ['packet.payload.options: an option', (p) => { p.signal = 'ESCALATE'; p.payload = { text: 'q', options: [{ id: 'a', label: 'l\ud800' }] } }],
      ['packet.scope.files entry', (p) => { p.scope = { files: ['ok.ts', 'b\udc00.ts'], zone: 'project' } }],
      ['packet.session_id', (p) => { p.session_id = 's\ud800' }],
      ['packet.from_name', (p) => { p.from_name = '\udc00' }]
    ]
    for (const [where, spoil] of places) {
      const p = base()
      spoil(p)
      const codec = new PacketCodec()
      for (const [path, encode] of [['encodePacket', () => encodePacket(p as unknown as Packet)], ['codec.encode', () => codec.encode(p as unknown as Packet)], ['codec.encodeAfter', () => codec.encodeAfter(16, p as unknown as Packet)]] as const) {
        assert.throws(encode, (err: Error) => err instanceof InvalidPacketError && err.message.startsWith(`${where} holds a lone surrogate`), `${where} through ${path}`)
      }
    }
  })

  it('encodes surrogate pairs in every string as before, and they decode back', () => {
    const p = { ...base(), signal: 'ESCALATE', payload: { text: 'a😀b', options: ['𝄞', { id: 'i😀', label: 'l😀', description: 'd😀' }] }, scope: { files: ['😀.md'], zone: 'project' }, session_id: 's😀', from_name: '😀' } as unknown as Packet
    const bytes = new PacketCodec().encode(p)
    assert.deepEqual(Buffer.from(bytes), Buffer.from(encodePacket(p)))
    const back = decodePacket(bytes)
    assert.equal(back.payload.text, 'a😀b')
    assert.deepEqual(back.payload.options, ['𝄞', { id: 'i😀', label: 'l😀', description: 'd😀' }])
    assert.equal(back.session_id, 's😀')
  })
})
