import { strict as assert } from 'node:assert'
import * as lp from 'it-length-prefixed'
import { MAX_FRAME_BYTES, MAX_PACKETS_PER_FRAME, decodeFrame, encodeAckFrame, encodeErrorFrame, encodeFrame, encodePacketsFrame, lengthPrefixed, type AckResult } from '../../src/delivery/frame.js'
import { MalformedFrameError } from '../../src/util/errors.js'

const bytes = (...xs: number[]): Uint8Array => new Uint8Array(xs)
const u16 = (n: number): number[] => [n >> 8, n & 0xff]
const u32 = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]
const P = 0x70
const A = 0x61
const E = 0x65

function rejects (frame: Uint8Array, pattern: RegExp): void {
  assert.throws(() => decodeFrame(frame), (err: unknown) => {
    assert.ok(err instanceof MalformedFrameError, `expected MalformedFrameError, got ${String(err)}`)
    assert.equal((err as { code?: string }).code, 'MALFORMED_FRAME')
    assert.match((err as Error).message, pattern)
    return true
  })
}

describe('delivery - frame codec', () => {
  describe('round trips', () => {
    it('a packet frame: batch, count and every packet byte for byte, in order', () => {
      const packets = [bytes(1, 2, 3), new Uint8Array(0), new Uint8Array(70_000).fill(7), bytes(0xa2, 0x61)]
      const enc = encodePacketsFrame(0xfffffffe, packets)
      assert.equal(enc.byteLength, 7 + packets.reduce((n, p) => n + 4 + p.byteLength, 0))
      const f = decodeFrame(enc)
      assert.ok(f.t === 'p')
      assert.equal(f.b, 0xfffffffe)
      assert.deepEqual(f.p.map((p) => [...p]), packets.map((p) => [...p]))
    })

    it('decoded packets are views of the received bytes, not copies', () => {
      const enc = encodePacketsFrame(3, [bytes(9, 9), bytes(8)])
      const f = decodeFrame(enc)
      assert.ok(f.t === 'p')
      assert.equal(f.p[0].buffer, enc.buffer)
      assert.equal(f.p[0].byteOffset, enc.byteOffset + 7 + 4)
      assert.equal(f.p[1].byteOffset, enc.byteOffset + 7 + 4 + 2 + 4)
      enc[enc.byteLength - 1] = 0x42
      assert.equal(f.p[1][0], 0x42, 'the same memory')
    })

    it('a packet frame inside a larger buffer (an offset view) decodes the same', () => {
      const enc = encodePacketsFrame(5, [bytes(4, 5, 6)])
      const outer = new Uint8Array(enc.byteLength + 20)
      outer.set(enc, 10)
      const f = decodeFrame(outer.subarray(10, 10 + enc.byteLength))
      assert.ok(f.t === 'p')
      assert.deepEqual([...f.p[0]], [4, 5, 6])
    })

    it('an ack frame: accepted seqs up to 2^53-1, rejections with code, reason and the retry flag', () => {
      const results: AckResult[] = [
        { s: 1 },
        { s: Number.MAX_SAFE_INTEGER },
        { s: 0x1_0000_0000 + 5 },
        { c: 'NO_GRANT', m: 'node x holds no grant from y — ünïcode' },
        { c: 'INBOX_FULL', m: 'inbox of z is full', r: true },
        { c: 'X', m: '' }
      ]
      const f = decodeFrame(encodeAckFrame(42, results))
      assert.deepEqual(f, { t: 'a', b: 42, r: results })
    })

    it('an empty ack frame and an error frame', () => {
      assert.deepEqual(decodeFrame(encodeAckFrame(0, [])), { t: 'a', b: 0, r: [] })
      assert.deepEqual(decodeFrame(encodeErrorFrame('MALFORMED_FRAME', 'bad bytes')), { t: 'e', c: 'MALFORMED_FRAME', m: 'bad bytes' })
    })

    it('encodeFrame dispatches on the frame type', () => {
      assert.deepEqual(decodeFrame(encodeFrame({ t: 'a', b: 1, r: [{ s: 2 }] })), { t: 'a', b: 1, r: [{ s: 2 }] })
      assert.deepEqual(decodeFrame(encodeFrame({ t: 'e', c: 'C', m: 'm' })), { t: 'e', c: 'C', m: 'm' })
    })

    it('long codes and reasons are cut to fit their length fields, and still decode', () => {
      const f = decodeFrame(encodeErrorFrame('C'.repeat(1000), 'é'.repeat(40_000)))
      assert.ok(f.t === 'e')
      assert.equal(f.c, 'C'.repeat(64))
      assert.equal(f.m, 'é'.repeat(16_000))
    })

    it('the encoder refuses what it cannot represent', () => {
      assert.throws(() => encodePacketsFrame(1, []), RangeError)
      assert.throws(() => encodePacketsFrame(2 ** 32, [bytes(1)]), RangeError)
      assert.throws(() => encodePacketsFrame(-1, [bytes(1)]), RangeError)
      assert.throws(() => encodeAckFrame(1, [{ s: -1 }]), RangeError)
      assert.throws(() => encodeAckFrame(1, [{ s: 2 ** 53 }]), RangeError)
    })
  })

  describe('prefixed: the bytes it-length-prefixed puts on the stream, in one buffer', () => {
    /** what lp.encode yields for one frame (its varint, then the frame), joined */
    const reference = (frame: Uint8Array): Buffer => Buffer.from(lp.encode.single(frame).subarray())
    const buf = (b: Uint8Array): Buffer => Buffer.from(b)
    // 1-, 2- and 3-byte varints (frames of < 128, < 16,384 and more bytes), and the edges between them
    const sizes = [0, 1, 113, 114, 120, 16_369, 16_370, 16_377, 70_000, 2_100_000]

    it('packet frames', () => {
      for (const n of sizes) {
        const packets = [new Uint8Array(n).fill(n % 251), bytes(1, 2)]
        const prefixed = encodePacketsFrame(7, packets, true)
        assert.deepEqual(buf(prefixed), reference(encodePacketsFrame(7, packets)), `packets of ${n} bytes`)
      }
    })

    it('ack frames, accepted and rejected results', () => {
      for (const n of [0, 1, 13, 14, 1024]) {
        const results: AckResult[] = Array.from({ length: n }, (_, k) => (k % 3 === 2 ? { c: 'INBOX_FULL', m: 'full '.repeat(k), r: true } : { s: k * 1000 }))
        assert.deepEqual(buf(encodeAckFrame(9, results, true)), reference(encodeAckFrame(9, results)), `${n} results`)
      }
    })

    it('lengthPrefixed of any frame, and lp.decode reads every prefixed frame back whole', async () => {
      const frames = sizes.map((n) => encodePacketsFrame(n + 1, [new Uint8Array(n).fill(3)]))
      frames.push(encodeErrorFrame('MALFORMED_FRAME', 'x'.repeat(300)), encodeAckFrame(1, []))
      for (const f of frames) assert.deepEqual(buf(lengthPrefixed(f)), reference(f))
      const read: Buffer[] = []
      for await (const chunk of lp.decode([...frames.map(lengthPrefixed)], { maxDataLength: MAX_FRAME_BYTES })) read.push(buf(chunk.subarray()))
      assert.deepEqual(read, frames.map(buf))
    })
  })

  describe('malformed frames are refused with MalformedFrameError', () => {
    it('empty, unknown type, or an old CBOR map', () => {
      rejects(bytes(), /frame type runs past the end/)
      rejects(bytes(0xff, 0, 0x13, 0x37), /unknown frame type 0xff/)
      rejects(bytes(0xa3, 0x61, 0x74, 0x61, 0x70), /unknown frame type 0xa3/)
    })

    it('a frame over the size limit', () => {
      rejects(new Uint8Array(MAX_FRAME_BYTES + 1), /exceeds/)
    })

    it('packet frames: truncated header, zero or too many packets, a length past the end, trailing bytes', () => {
      rejects(bytes(P, ...u32(1).slice(0, 3)), /batch number runs past/)
      rejects(bytes(P, ...u32(1), 0), /packet count runs past/)
      rejects(bytes(P, ...u32(1), ...u16(0)), /1\.\.1024 packets, not 0/)
      rejects(bytes(P, ...u32(1), ...u16(MAX_PACKETS_PER_FRAME + 1)), /not 1025/)
      rejects(bytes(P, ...u32(1), ...u16(2), ...u32(1), 7), /packet length runs past/)
      rejects(bytes(P, ...u32(1), ...u16(1), ...u32(3), 7, 7), /packet 0 runs past/)
      rejects(bytes(P, ...u32(1), ...u16(1), ...u32(0xffffffff), 7), /packet 0 runs past/)
      rejects(bytes(P, ...u32(1), ...u16(1), ...u32(1), 7, 0), /1 bytes after the last field/)
      const good = encodePacketsFrame(1, [bytes(1, 2)])
      const longer = new Uint8Array(good.byteLength + 3)
      longer.set(good)
      rejects(longer, /3 bytes after the last field/)
    })

    it('ack frames: too many results, unknown result kind, truncated seq, seq over 2^53-1, truncated or non-UTF-8 text, empty code, trailing bytes', () => {
      rejects(bytes(A, ...u32(1), ...u16(MAX_PACKETS_PER_FRAME + 1)), /at most 1024 results/)
      rejects(bytes(A, ...u32(1), ...u16(1)), /result 0 runs past/)
      rejects(bytes(A, ...u32(1), ...u16(1), 3), /result 0 has unknown kind 3/)
      rejects(bytes(A, ...u32(1), ...u16(1), 0, ...u32(0), 1, 2), /seq of result 0 runs past/)
      rejects(bytes(A, ...u32(1), ...u16(1), 0, ...u32(0x200000), ...u32(0)), /exceeds 2\^53-1/)
      rejects(bytes(A, ...u32(1), ...u16(1), 1, 5, 0x41), /code of result 0 runs past/)
      rejects(bytes(A, ...u32(1), ...u16(1), 1, 1, 0x41, ...u16(4), 0x61), /reason of result 0 runs past/)
      rejects(bytes(A, ...u32(1), ...u16(1), 1, 1, 0xff, ...u16(0)), /code of result 0 is not UTF-8/)
      rejects(bytes(A, ...u32(1), ...u16(1), 2, 1, 0x41, ...u16(1), 0xc3), /reason of result 0 is not UTF-8/)
      rejects(bytes(A, ...u32(1), ...u16(1), 1, 0, ...u16(0)), /empty code/)
      rejects(bytes(A, ...u32(1), ...u16(1), 0, ...u32(0), ...u32(1), 9), /1 bytes after the last field/)
      rejects(bytes(A, ...u32(1), ...u16(0), 0), /1 bytes after the last field/)
    })

    it('error frames: truncated text, empty code, trailing bytes', () => {
      rejects(bytes(E), /error code runs past/)
      rejects(bytes(E, 2, 0x41), /error code runs past/)
      rejects(bytes(E, 1, 0x41, 0), /error reason runs past/)
      rejects(bytes(E, 0, ...u16(0)), /empty code/)
      rejects(bytes(E, 1, 0x41, ...u16(0), 1), /1 bytes after the last field/)
    })
  })
})
