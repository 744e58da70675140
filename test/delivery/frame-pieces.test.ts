// encodePacketsFramePieces (the link's encode: large packets travel as views
// of their stored values, not copied into a frame buffer) against the
// reference encodePacketsFrame(b, packets, true): the same bytes, for every
// mix of packet sizes; and large packets through a real pair of daemons
// (libp2p: TCP, Noise, yamux; LevelDB on both sides), stored byte for byte,
// in order, once each.
import { strict as assert } from 'node:assert'
import * as lp from 'it-length-prefixed'
import { Uint8ArrayList } from 'uint8arraylist'
import { MAX_FRAME_BYTES, VIEW_MIN_BYTES, decodeFrame, encodePacketsFrame, encodePacketsFramePieces, outgoingPacketsFrame } from '../../src/delivery/frame.js'
import { duplicates, inboxRows, startPair, status, type Pair } from './helpers.js'

/** `len` bytes that differ from packet to packet and along each */
function pattern (len: number, seed: number): Uint8Array {
  const out = new Uint8Array(len)
  for (let i = 0; i < len; i++) out[i] = (i * 7 + seed) & 0xff
  return out
}

function joined (pieces: Uint8Array[]): Buffer {
  return Buffer.concat(pieces.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)))
}

describe('delivery - encodePacketsFramePieces against encodePacketsFrame', () => {
  const sizes = [[0], [1], [4095], [4096], [VIEW_MIN_BYTES - 1, VIEW_MIN_BYTES], [65_536], [65_536, 65_536, 3, 65_536], [3, 65_536], [65_536, 0],
    Array.from({ length: 16 }, () => 65_536), Array.from({ length: 256 }, () => 512), Array.from({ length: 40 }, (_, k) => (k * 1777) % 9000), [200_000, 1, 2, 3]]

  it('the same bytes, with its length prefix, for any mix of packet sizes and any view threshold', () => {
    for (const [n, lens] of sizes.entries()) {
      const packets = lens.map((len, k) => pattern(len, k + n))
      const ref = Buffer.from(encodePacketsFrame(0xfffffffe - n, packets, true))
      for (const min of [VIEW_MIN_BYTES, 0, 1, 4096, 100_000]) {
        const pieces = encodePacketsFramePieces(0xfffffffe - n, packets, min)
        assert.deepEqual(joined(pieces), ref, `sizes ${lens.slice(0, 5).join(',')} min ${min}`)
        assert.ok(pieces.every((p) => p.byteLength > 0), 'no empty piece')
        // every packet at or over the threshold (and not empty) is the caller's own bytes, not a copy
        const big = packets.filter((p) => p.byteLength >= Math.max(1, min))
        assert.deepEqual(pieces.filter((p) => packets.includes(p)), big, `sizes ${lens.slice(0, 5).join(',')} min ${min}: large packets as views`)
        if (big.length === 0) assert.equal(pieces.length, 1, 'no large packet: one buffer')
      }
    }
  })

  it('outgoingPacketsFrame: one buffer for small packets, a list of the pieces otherwise; it decodes as the reference frame', async () => {
    for (const [n, lens] of sizes.entries()) {
      const packets = lens.map((len, k) => pattern(len, k + n))
      const out = outgoingPacketsFrame(n + 1, packets)
      const ref = encodePacketsFrame(n + 1, packets, true)
      assert.equal(out instanceof Uint8ArrayList, packets.some((p) => p.byteLength >= VIEW_MIN_BYTES))
      assert.equal(out.byteLength, ref.byteLength)
      assert.deepEqual(Buffer.from(out.subarray()), Buffer.from(ref))
      const frames = []
      for await (const f of lp.decode([out], { maxDataLength: MAX_FRAME_BYTES })) frames.push(decodeFrame(f.subarray()))
      assert.equal(frames.length, 1)
      const f = frames[0]
      assert.ok(f.t === 'p')
      assert.equal(f.b, n + 1)
      assert.deepEqual(f.p.map((p) => Buffer.from(p)), packets.map((p) => Buffer.from(p)))
    }
  })

  it('the reference\'s errors: no packets, too many, a batch number out of range', () => {
    assert.throws(() => encodePacketsFramePieces(1, []), RangeError)
    assert.throws(() => encodePacketsFramePieces(1, Array.from({ length: 1025 }, () => new Uint8Array(1))), RangeError)
    assert.throws(() => encodePacketsFramePieces(-1, [new Uint8Array(5000)]), RangeError)
    assert.throws(() => encodePacketsFramePieces(2 ** 32, [new Uint8Array(5000)]), RangeError)
  })
})

describe('delivery - large packets through a real link (frames as pieces)', function () {
  this.timeout(120_000)
  let pair: Pair | undefined

  after(async () => {
    await pair?.a.cleanup()
    await pair?.b.cleanup()
  })

  it('64 KiB and small texts mixed, many in flight: every one stored once, in send order, byte for byte', async () => {
    pair = await startPair()
    const { a, b } = pair
    const texts = Array.from({ length: 120 }, (_, k) => `${k} ` + String.fromCharCode(97 + (k % 26)).repeat([65_000, 5, 9000, 4100, 250_000, 4090][k % 6]))
    const c = await a.client()
    try {
      // all in flight at once: frames carry many packets, large ones as views
      const ids = (await Promise.all(texts.map(async (text) => await c.call('send', { as: 'alice', to: 'bob', text })))).map((r) => r.id)
      const rows = await (async () => {
        for (let i = 0; i < 600; i++) {
          const r = await inboxRows(b, 'bob')
          if (r.length >= texts.length) return r
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error('not all delivered')
      })()
      assert.equal(rows.length, texts.length)
      assert.deepEqual(duplicates(rows.map((r) => r.id)), [])
      assert.deepEqual(rows.map((r) => r.id), ids, 'send order')
      assert.ok(rows.every((r, k) => r.payload.text === texts[k]), 'the texts byte for byte')
      assert.equal((await status(a)).outbox.queued, 0)
    } finally {
      c.close()
    }
  })
})
