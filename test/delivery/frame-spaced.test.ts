// decodeFrameSpaced (the receiver's decode: each packet copied once, straight
// from the stream's chunks, into its own inbox-value buffer) against the
// reference decodeFrame of the joined frame: the same frames, packets and
// errors, for frames cut into chunks anywhere; and the inbox value it leads
// to, in a real LevelDB, byte for byte the one encodeInboxValue makes.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as lp from 'it-length-prefixed'
import { MAX_FRAME_BYTES, SPACED_MIN_AVERAGE, decodeFrame, decodeFrameSpaced, encodeAckFrame, encodeErrorFrame, encodePacketsFrame, lengthPrefixed, type Frame } from '../../src/delivery/frame.js'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { InboxStore, encodeInboxValue, seqKey } from '../../src/store/inbox.js'
import { ENTRY_HEADER, fillInboxValue } from '../../src/store/inbox-values.js'
import { ulid } from '../../src/util/ulid.js'

const HEAD = ENTRY_HEADER

/** a deterministic generator, so a failure can be replayed */
function rng (seed: number): () => number {
  let s = seed >>> 0
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
}

/** `len` bytes that differ from packet to packet and along each */
function pattern (len: number, seed: number): Uint8Array {
  const out = new Uint8Array(len)
  for (let i = 0; i < len; i++) out[i] = (i * 7 + seed) & 0xff
  return out
}

/** `frame` as it-length-prefixed yields it when the stream delivers it cut at `cuts` */
async function asChunks (frame: Uint8Array, cuts: number[]): Promise<Parameters<typeof decodeFrameSpaced>[0]> {
  const wire = lengthPrefixed(frame)
  const at = [...new Set(cuts.map((c) => Math.min(wire.byteLength, Math.max(0, c))))].sort((a, b) => a - b)
  const pieces: Uint8Array[] = []
  let from = 0
  for (const c of [...at, wire.byteLength]) { if (c > from) pieces.push(wire.subarray(from, c)); from = c }
  const out = []
  for await (const chunk of lp.decode(pieces, { maxDataLength: MAX_FRAME_BYTES + 16 })) out.push(chunk)
  assert.equal(out.length, 1)
  return out[0]
}

type Outcome = { frame: Frame } | { error: { name: string, code: unknown, message: string } }
function outcome (fn: () => Frame): Outcome {
  try {
    return { frame: fn() }
  } catch (err) {
    const e = err as Error & { code?: unknown }
    return { error: { name: e.name, code: e.code, message: e.message } }
  }
}

/** the same outcome as the reference: equal frames (packets byte for byte) or the same error */
function sameAsReference (frame: Uint8Array, list: Parameters<typeof decodeFrameSpaced>[0], what: string): void {
  const ref = outcome(() => decodeFrame(frame))
  const got = outcome(() => decodeFrameSpaced(list, HEAD))
  if ('error' in ref) { assert.deepEqual(got, ref, what); return }
  assert.ok('frame' in got, `${what}: ${JSON.stringify(got)}`)
  const r = ref.frame
  const g = got.frame
  assert.equal(g.t, r.t, what)
  if (r.t !== 'p' || g.t !== 'p') { assert.deepEqual(g, r, what); return }
  assert.equal(g.b, r.b, what)
  assert.deepEqual(g.p.map((p) => Buffer.from(p)), r.p.map((p) => Buffer.from(p)), what)
  if (frame.byteLength < g.p.length * SPACED_MIN_AVERAGE) {
    // small packets: the reference's own decode (views of the joined frame)
    assert.equal(g.v, undefined, what)
    return
  }
  assert.ok(g.v !== undefined && g.v.length === g.p.length, what)
  g.p.forEach((p, k) => {
    const v = (g.v as Uint8Array[])[k]
    assert.equal(v.byteLength, HEAD + p.byteLength, what)
    assert.equal(p.buffer, v.buffer, `${what}: packet ${k} is the value's own tail`)
    assert.equal(p.byteOffset, v.byteOffset + HEAD, what)
    // each packet in a buffer of its own (small ones may share Node's pool, never bytes)
    const prev = k > 0 ? (g.v as Uint8Array[])[k - 1] : undefined
    if (prev !== undefined && prev.buffer === v.buffer) assert.ok(prev.byteOffset + prev.byteLength <= v.byteOffset || v.byteOffset + v.byteLength <= prev.byteOffset, `${what}: values ${k - 1} and ${k} overlap`)
    if (p.byteLength >= 4096) assert.notEqual(v.buffer, list.subarray().buffer, `${what}: a copy, not a view of the chunks`)
  })
}

describe('delivery - decodeFrameSpaced against decodeFrame', () => {
  it('packet frames cut into chunks anywhere (inside the head, a length, a packet): the same batch and packets, each in its own value buffer (frames of small packets: the reference\'s views)', async () => {
    const rand = rng(21)
    const sizes = [[1], [0], [0, 0, 5], [4089], [4090], [65_536], [65_536, 65_536, 3, 65_536], Array.from({ length: 16 }, () => 65_536), Array.from({ length: 256 }, () => 512), [70_000, 1, 2, 3]]
    for (const [n, lens] of sizes.entries()) {
      const packets = lens.map((len, k) => pattern(len, k + n))
      const frame = encodePacketsFrame(0xfffffffe - n, packets)
      const wire = lengthPrefixed(frame).byteLength
      const cutSets = [[], [1], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], Array.from({ length: 8 }, () => Math.floor(rand() * wire)), Array.from({ length: Math.ceil(wire / 65_535) }, (_, k) => (k + 1) * 65_535)]
      for (const cuts of cutSets) sameAsReference(frame, await asChunks(frame, cuts), `frame ${n}, cuts ${cuts.slice(0, 6).join(',')}`)
    }
  })

  it('ack and error frames: decoded as the reference does', async () => {
    for (const frame of [encodeAckFrame(3, [{ s: 1 }, { c: 'INBOX_FULL', m: 'full', r: true }]), encodeAckFrame(1, []), encodeErrorFrame('MALFORMED_FRAME', 'x'.repeat(300))]) {
      sameAsReference(frame, await asChunks(frame, [3, 5]), 'non-packet frame')
    }
  })

  it('malformed packet frames, cut into chunks: the same MalformedFrameError as the reference', async () => {
    const rand = rng(7)
    const good = encodePacketsFrame(9, [new Uint8Array(300).fill(1), new Uint8Array(70_000).fill(2), new Uint8Array(5).fill(3)])
    const cases: Uint8Array[] = [
      Uint8Array.of(0x70), Uint8Array.of(0x70, 0, 0, 0, 1, 0), Uint8Array.of(0x70, 0, 0, 0, 1, 0, 0),
      Uint8Array.of(0x70, 0, 0, 0, 1, 0x04, 0x01), Uint8Array.of(0x70, 0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 7),
      Uint8Array.of(0x70, 0, 0, 0, 1, 0, 1, 0xff, 0xff, 0xff, 0xff, 7), Uint8Array.of(0x70, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 7, 0)
    ]
    // truncations, trailing bytes and changed count / length bytes of a good frame
    for (let k = 0; k < 40; k++) {
      const cut = good.slice(0, 1 + Math.floor(rand() * (good.byteLength - 1)))
      cases.push(cut)
      const longer = new Uint8Array(good.byteLength + 1 + Math.floor(rand() * 4))
      longer.set(good)
      cases.push(longer)
      const changed = good.slice()
      const at = [5, 6, 7, 8, 9, 10, 7 + 4 + 300, 7 + 4 + 300 + 3, 7 + 8 + 70_300 + 2][k % 9]
      changed[at] = Math.floor(rand() * 256)
      cases.push(changed)
    }
    for (const [n, frame] of cases.entries()) {
      const wire = lengthPrefixed(frame).byteLength
      sameAsReference(frame, await asChunks(frame, Array.from({ length: 5 }, () => Math.floor(rand() * wire))), `case ${n} (${frame.byteLength} bytes)`)
    }
  })

  it('a frame over the size limit: the same error', async () => {
    const frame = new Uint8Array(MAX_FRAME_BYTES + 1)
    frame[0] = 0x70
    sameAsReference(frame, await asChunks(frame, [70_000]), 'oversized')
  })
})

describe('store - inbox values filled in place (fillInboxValue) against encodeInboxValue', () => {
  let dir: string
  let db: RawDb

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-spaced-')); db = await openDb(join(dir, 'store')) })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('fillInboxValue gives the bytes of encodeInboxValue', () => {
    for (const t of [0, 1, Date.now(), 1.5, 2 ** 53 - 1]) {
      for (const len of [0, 1, 512, 65_536]) {
        const packet = Uint8Array.from({ length: len }, (_, i) => i & 0xff)
        const spaced = Buffer.alloc(HEAD + len, 0xee)
        spaced.set(packet, HEAD)
        assert.deepEqual(Buffer.from(fillInboxValue(spaced, t)), Buffer.from(encodeInboxValue(t, packet)))
      }
    }
  })

  it('an append of packets in their own value buffers stores what an append of plain packets stores, and reads them back the same; a value that is not the packet\'s own is not used', async () => {
    const inbox = new InboxStore(db, new Committer(batchTarget(db), 'batch'), 1000, 3_600_000)
    const node = 'n1'
    const packets = [new Uint8Array(65_536).fill(5), Uint8Array.of(1, 2, 3), new Uint8Array(0)]
    const ids = packets.map(() => ulid())
    const frame = encodePacketsFrame(1, packets)
    const decoded = decodeFrameSpaced(await asChunks(frame, [10, 70_000]), HEAD)
    assert.ok(decoded.t === 'p' && decoded.v !== undefined)
    const spaced = await inbox.append(decoded.p.map((packet, k) => ({ nodeId: node, packetId: ids[k], packet, value: (decoded.v as Uint8Array[])[k] })))
    const plain = await inbox.append(packets.map((packet) => ({ nodeId: 'n2', packetId: ulid(), packet })))
    // a value buffer that does not hold this packet is ignored (the packet is copied as before)
    const stray = await inbox.append([{ nodeId: 'n3', packetId: ulid(), packet: Uint8Array.of(9, 9), value: new Uint8Array(HEAD + 2) }])
    assert.deepEqual(spaced.map((r) => 'seq' in r && r.seq), [1, 2, 3])
    assert.deepEqual(plain.map((r) => 'seq' in r && r.seq), [1, 2, 3])
    assert.deepEqual(stray.map((r) => 'seq' in r && r.seq), [1])
    for (let seq = 1; seq <= 3; seq++) {
      const a = await db.get(seqKey(node, seq))
      const b = await db.get(seqKey('n2', seq))
      assert.ok(a !== undefined && b !== undefined)
      // the same layout; the received time is each append's own
      assert.equal(a.byteLength, b.byteLength)
      assert.equal(a[0], b[0])
      assert.deepEqual(Buffer.from(a.subarray(HEAD)), Buffer.from(packets[seq - 1]))
      assert.deepEqual(Buffer.from(b.subarray(HEAD)), Buffer.from(packets[seq - 1]))
    }
    assert.deepEqual(Buffer.from((await db.get(seqKey('n3', 1)) as Uint8Array).subarray(HEAD)), Buffer.of(9, 9))
    const read = await inbox.read(node, 0, 10)
    assert.deepEqual(read.map((e) => Buffer.from(e.packet)), packets.map((p) => Buffer.from(p)))
    // a duplicate in its own buffer is answered as one, and stores nothing
    const again = await inbox.append([{ nodeId: node, packetId: ids[1], packet: decoded.p[1], value: decoded.v[1] }])
    assert.deepEqual(again, [{ seq: 2, duplicate: true }])
  })
})
