// A payload text held as its UTF-8 bytes (src/packet/held-text.ts) against the
// string it stands for, the reference: HeldText.of accepts exactly the
// well-formed UTF-8 that the frame's reference decode accepts; a binary
// request frame decoded with held texts is the reference's request once the
// texts are decoded, and refuses the same frames with the same errors; the
// `send` params check gives the same params and the same errors; a packet with
// a held text encodes to the bytes of the same packet with the string (and
// refuses what that refuses, with the same error), without the string ever
// being made.
import { strict as assert } from 'node:assert'
import { isUtf8 } from 'node:buffer'
import { decodeRequestFrame, encodeRequestFrame, type RequestFrame } from '../../src/control/request-frame.js'
import { FRAME_HEAD } from '../../src/control/frame-head.js'
import { checkSendParams, sendSchema } from '../../src/control/send-params.js'
import { parseParams } from '../../src/control/server.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { PacketCodec } from '../../src/packet/codec.js'
import { MAX_TEXT_FIELD } from '../../src/packet/fields.js'
import { HeldText, heldTextOf, putText, utf16Units } from '../../src/packet/held-text.js'
import type { Packet, Payload, Signal } from '../../src/packet/types.js'
import { seeded } from '../../src/util/seeded.js'
import { ulid } from '../../src/util/ulid.js'

const rnd = seeded(0x4e1d)
const int = (n: number): number => Math.floor(rnd() * n)
const PIECES = ['a', 'Z', ' ', '\n', '"', '\\', '\u0000', '\u007f', '\u0080', 'é', 'ß', '\u07ff', '\u0800', '中', '\ufffd', '\uffff', '\ufeff', '😀', '\u{10ffff}', '\u{10000}']

function randomText (units: number): string {
  let s = ''
  while (s.length < units) s += PIECES[int(PIECES.length)]
  return s
}

/** texts of many sizes (around the hold threshold and 64 KiB) and scripts */
const TEXTS: string[] = [
  '', 'x', 'é', '😀', '\ufeffbom first', 'x'.repeat(4095), 'x'.repeat(4096), 'é'.repeat(2048), '中'.repeat(1366),
  'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(1821), '😀'.repeat(16384), randomText(65536), randomText(5000), randomText(70_000),
  ...Array.from({ length: 20 }, () => randomText(int(9000))), 'x'.repeat(MAX_TEXT_FIELD), 'é'.repeat(MAX_TEXT_FIELD)
]

/** byte sequences that are not UTF-8: lone continuation, overlong, surrogate halves, past U+10FFFF, cut short */
const BAD: number[][] = [[0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xf0, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xff], [0xc3], [0xe4, 0xb8], [0xf0, 0x9f, 0x98], [0xc3, 0x28]]

/** a text's bytes with a bad sequence somewhere in it */
function broken (text: string, bad: number[]): Buffer {
  const b = Buffer.from(text)
  const at = int(b.length + 1)
  // at a character boundary, so only the bad sequence breaks it
  let k = at
  while (k < b.length && (b[k] & 0xc0) === 0x80) k++
  return Buffer.concat([b.subarray(0, k), Buffer.from(bad), b.subarray(k)])
}

function frameOf (bytes: Buffer): RequestFrame {
  return { id: bytes.readUInt32BE(1), body: bytes.subarray(FRAME_HEAD) }
}

/** a request with every held text decoded (what the reference decode gives) */
function decoded (v: unknown): unknown {
  if (v instanceof HeldText) return v.toString()
  if (Array.isArray(v)) return v.map(decoded)
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decoded(x)]))
  return v
}

function errorOf (f: () => unknown): { name: string, code?: string, message: string } | 'ok' {
  try { f(); return 'ok' } catch (err) { const e = err as Error & { code?: string }; return { name: e.name, code: e.code, message: e.message } }
}

/** a frame body whose only text slot holds `bytes` */
function sendFrame (id: number, params: Record<string, unknown>, bytes: Buffer): RequestFrame {
  const good = frameOf(encodeRequestFrame(id, 'send', { ...params, text: 'x'.repeat(bytes.length) }) as Buffer)
  bytes.copy(good.body, good.body.length - bytes.length)
  return good
}

const keys = [generateNodeKey().id, generateNodeKey().id]

function packetWith (signal: Signal, payload: Payload): Packet {
  return { id: ulid(), from: keys[0], to: keys[1], from_name: 'al', signal, scope: { files: [], zone: 'project' }, payload, ts: 1_700_000_000_000, priority: 'high' }
}

function encoded (codec: PacketCodec, p: Packet, room: number, reference = false): unknown {
  try {
    const r = reference ? codec.encodeAfterReference(room, p) : codec.encodeAfter(room, p)
    return { bytes: Buffer.from(r.bytes).toString('hex'), whole: r.whole === undefined ? undefined : Buffer.from(r.whole).toString('hex') }
  } catch (err) {
    const e = err as Error & { code?: string }
    return { name: e.name, code: e.code, message: e.message }
  }
}

describe('packet - a text held as its UTF-8 bytes', () => {
  it('HeldText.of takes exactly well-formed UTF-8, with the string\'s length and the string itself', () => {
    for (const t of TEXTS) {
      const b = Buffer.from(t)
      const h = HeldText.of(b)
      assert.ok(h !== undefined)
      assert.equal(h.length, t.length, `length of ${t.slice(0, 20)}`)
      assert.equal(utf16Units(b), t.length)
      assert.equal(h.wasDecoded, false)
      assert.equal(h.toString(), t)
      assert.equal(h.toString(), b.toString('utf8'))
      for (const bad of BAD) {
        const x = broken(t, bad)
        assert.equal(isUtf8(x), false)
        assert.equal(HeldText.of(x), undefined, `${JSON.stringify(bad)} in ${t.slice(0, 20)}`)
      }
    }
  })

  it('a frame decoded with held texts is the reference\'s request; a bad text is refused with the reference\'s error', () => {
    const rest = { as: 'al', to: 'bob', signal: 'MESSAGE', priority: 'high' }
    for (const [k, t] of TEXTS.entries()) {
      const frame = frameOf(encodeRequestFrame(k, 'send', { ...rest, text: t }) as Buffer)
      const ref = decodeRequestFrame(frame)
      for (const hold of [0, 1, 4096]) {
        const held = decodeRequestFrame(frame, hold)
        assert.deepEqual(decoded(held), ref)
        const text = (held.params as { text: unknown }).text
        assert.equal(text instanceof HeldText, Buffer.byteLength(t) >= hold, `held from ${hold}`)
      }
      const bad = sendFrame(k, rest, broken(t, BAD[int(BAD.length)]))
      assert.deepEqual(errorOf(() => decodeRequestFrame(bad, 0)), errorOf(() => decodeRequestFrame(bad)))
      assert.notEqual(errorOf(() => decodeRequestFrame(bad)), 'ok')
    }
    const sends = TEXTS.slice(0, 12).map((text, k) => ({ as: 'al', to: `n${k}`, text }))
    const batch = frameOf(encodeRequestFrame(3, 'send.batch', { sends }) as Buffer)
    assert.deepEqual(decoded(decodeRequestFrame(batch, 0)), decodeRequestFrame(batch))
  })

  it('the send params check and its schema give the same params and errors for a held text as for its string', () => {
    const cases: Array<Record<string, unknown>> = [
      { as: 'al', to: 'bob' }, { as: 'al', to: 'bob', signal: 'ESCALATE' }, { as: '', to: 'bob' }, { as: 'al', to: 'bob', extra: 1 },
      { as: 'al', to: 'bob', priority: 'urgent' }, { as: 'al', to: 'bob', ttl_ms: -1 }
    ]
    for (const c of cases) {
      for (const t of [TEXTS[5], TEXTS[11]]) {
        const held = { ...c, text: HeldText.of(Buffer.from(t)) }
        const plain = { ...c, text: t }
        assert.deepEqual(decoded(errorOf(() => parseParams({ params: sendSchema, fast: checkSendParams }, held))), errorOf(() => parseParams({ params: sendSchema, fast: checkSendParams }, plain)))
        const quick = checkSendParams(held)
        assert.deepEqual(decoded(quick), checkSendParams(plain))
        if (quick !== undefined) assert.ok(quick.text instanceof HeldText, 'the fast check keeps the bytes')
        const viaSchema = sendSchema.safeParse(held)
        assert.equal(viaSchema.success, sendSchema.safeParse(plain).success)
        if (viaSchema.success) assert.deepEqual(viaSchema.data, sendSchema.parse(plain))
      }
    }
  })

  it('a packet with a held text encodes to the bytes of the packet with its string, never making the string', () => {
    const codec = new PacketCodec()
    const ref = new PacketCodec()
    const shapes: Array<[Signal, Payload]> = [['MESSAGE', {}], ['MESSAGE', { context: { k: [1, 'é'] } }], ['ESCALATE', { options: ['yes', 'no'] }], ['SPAWN', { context: 'c' }]]
    for (const t of TEXTS) {
      for (const [signal, rest] of shapes) {
        const h = HeldText.of(Buffer.from(t)) as HeldText
        const payload: Payload = { ...rest }
        putText(payload, h)
        const withHeld = packetWith(signal, payload)
        const withString = { ...withHeld, payload: { ...rest, text: t } }
        const room = 1 + int(100)
        const got = encoded(codec, withHeld, room) as { bytes: string, whole?: string }
        assert.equal(h.wasDecoded, false, 'the one-pass encoder wrote the bytes')
        const want = encoded(ref, withString, room) as { bytes: string, whole?: string }
        assert.equal(got.bytes, want.bytes)
        if (want.bytes === undefined) { assert.deepEqual(got, want, 'refused alike (too large)'); continue }
        assert.equal(got.bytes, (encoded(ref, withString, room, true) as { bytes: string }).bytes, 'and the reference path of the string packet')
        // a string with a surrogate pair takes dag-cbor's path (no `whole`); its bytes are the held text's
        if (want.whole !== undefined) assert.equal(got.whole, want.whole)
        assert.ok(got.whole?.endsWith(got.bytes) === true && got.whole.length === got.bytes.length + 2 * room, 'the room, then the packet')
        assert.equal(withHeld.payload.text, t, 'a reader gets the string')
      }
    }
  })

  it('where the one-pass encoder does not write it, the reference decides with the string: the same error', () => {
    const codec = new PacketCodec()
    const over = 'x'.repeat(MAX_TEXT_FIELD + 1)
    const cases: Array<[Signal, string]> = [['RETURN', 'not allowed here'], ['MESSAGE', over], ['MESSAGE', 'é'.repeat(MAX_TEXT_FIELD + 1)]]
    for (const [signal, t] of cases) {
      const payload: Payload = signal === 'RETURN' ? { result: 1 } : {}
      putText(payload, HeldText.of(Buffer.from(t)) as HeldText)
      const p = packetWith(signal, payload)
      const want = encoded(codec, { ...p, payload: { ...payload, text: t } }, 9)
      assert.ok(typeof want === 'object' && want !== null && 'name' in want)
      assert.deepEqual(encoded(codec, p, 9), want)
      assert.deepEqual(encoded(codec, p, 9), encoded(codec, { ...p, payload: { ...payload, text: t } }, 9))
    }
  })

  it('a payload\'s held text is a plain text to its readers: read, copied, assigned over', () => {
    const payload: Payload = {}
    const h = HeldText.of(Buffer.from('héllo')) as HeldText
    putText(payload, h)
    assert.equal(heldTextOf(payload), h)
    assert.deepEqual(Object.keys(payload), ['text'])
    assert.equal(JSON.stringify(payload), '{"text":"héllo"}')
    assert.deepEqual({ ...payload }, { text: 'héllo' })
    payload.text = 'other'
    assert.equal(heldTextOf(payload), undefined)
    assert.deepEqual(payload, { text: 'other' })
    const q: Payload = {}
    putText(q, HeldText.of(Buffer.from('x')) as HeldText)
    delete q.text
    assert.equal(heldTextOf(q), undefined)
    putText(q, 'plain')
    assert.deepEqual(q, { text: 'plain' })
  })
})
