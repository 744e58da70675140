// The direct packet decoder against the reference (dag-cbor strict decode +
// validatePacket): equal packets for valid canonical bytes, and the same
// accept/reject decision, error class, message and cause for everything else.
import { strict as assert } from 'node:assert'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { MAX_PACKET_BYTES, decodePacket, decodePacketViaDagCbor, encodePacket } from '../../src/packet/codec.js'
import { decodeCanonicalPacket } from '../../src/packet/decode-fast.js'
import { SIGNALS, type Packet, type Payload, type Signal } from '../../src/packet/types.js'
import { seeded } from '../../src/util/seeded.js'
import { payloadFor } from '../utils/payloads.js'
import { ulid } from '../../src/util/ulid.js'

// ---- a seeded random source (failures reproduce) ---------------------------

const rnd = seeded(0x5eed)
const int = (n: number): number => Math.floor(rnd() * n)
const pick = <T>(list: readonly T[]): T => list[int(list.length)]
const chance = (p: number): boolean => rnd() < p
function randomBytes (n: number): Uint8Array {
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = int(256)
  return b
}

// text pieces: ASCII, 2-, 3- and 4-byte UTF-8, a BOM and U+FFFD inside, NUL (no lone surrogate: a packet refuses one)
const PIECES = ['a', 'Z', '0', ' ', '\n', '"', '\\', '\u0000', '\u007f', '\u0080', 'é', 'ß', '\u07ff', '\u0800', '中', '\ufffd', '\uffff', '😀', '𝄞', 'x\ufeff']

/** Random text of at most `max` UTF-16 units (a leading BOM included now and then). */
function randomText (max: number, ascii = false): string {
  const units = int(max + 1)
  let s = !ascii && units > 0 && chance(0.05) ? '\ufeff' : ''
  while (s.length < units) {
    const piece = ascii ? pick(PIECES.slice(0, 7)) : pick(PIECES)
    if (s.length + piece.length > max) break
    s += piece
  }
  return s
}
const nonEmpty = (max: number): string => randomText(max - 1) + 'x'

const keys = Array.from({ length: 4 }, () => generateNodeKey().id)

function randomPayload (signal: Signal, small: boolean): Payload {
  const t = (): string => chance(0.1) ? '' : !small && chance(0.05) ? 'x'.repeat(2000 + int(20_000)) : randomText(600)
  const options = (): string[] => Array.from({ length: 1 + int(chance(0.1) ? 100 : 5) }, () => randomText(!small && chance(0.05) ? 4096 : 40))
  return payloadFor(signal, { t, v: t, options, chance, pick })
}

const TS = [0, 1, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER]

/** A random valid packet; `small` ones have no long strings, lists or tokens (the mutation tests write thousands). */
function randomPacket (small = false): Packet {
  const signal = pick(SIGNALS)
  const p: Packet = {
    id: ulid(),
    from: pick(keys),
    to: pick(keys),
    signal,
    scope: { files: Array.from({ length: !small && chance(0.05) ? 1000 : int(4) }, () => randomText(!small && chance(0.05) ? 4096 : 30)), zone: pick(['kernel', 'project', 'personal'] as const) },
    payload: randomPayload(signal, small),
    ts: chance(0.3) ? pick(TS) : Date.now() + int(1e6)
  }
  const o = p as unknown as Record<string, unknown>
  for (const k of ['from_name', 'to_name', 'session_id', 'conversation_id', 'in_reply_to']) if (chance(0.4)) o[k] = nonEmpty(!small && chance(0.1) ? 256 : 20)
  if (chance(0.3)) p.return_to = pick(keys)
  if (chance(0.3)) p.priority = pick(['low', 'normal', 'high'] as const)
  if (chance(0.3)) p.requires_reply = chance(0.5)
  if (chance(0.5)) {
    const list = (): Uint8Array[] => Array.from({ length: int(small ? 3 : 17) }, () => randomBytes(pick([0, 1, 23, 24, 200, 300, 70_000].slice(0, small ? 4 : chance(0.02) ? 7 : 6))))
    p.proof = {}
    if (chance(0.7)) p.proof.grants = list()
    if (chance(0.5)) p.proof.lineage = list()
  }
  return p
}

// ---- a CBOR writer that can also write what the encoder never does --------

type Item =
  | { k: 'uint' | 'neg', v: number | bigint, w?: number }
  | { k: 'text', s: string, w?: number, raw?: Uint8Array }
  | { k: 'bytes', b: Uint8Array, w?: number }
  | { k: 'array', items: Item[], w?: number, indef?: boolean, delta?: number }
  | { k: 'map', entries: Array<[Item, Item]>, w?: number, indef?: boolean, delta?: number }
  | { k: 'raw', b: Uint8Array }
  | { k: 'tag', tag: number, item: Item }

const raw = (...b: number[]): Item => ({ k: 'raw', b: Uint8Array.from(b) })
const WIDTH_MINOR: Record<number, number> = { 1: 24, 2: 25, 4: 26, 8: 27 }

function head (out: Uint8Array[], major: number, n: number | bigint, w?: number): void {
  const v = BigInt(n)
  const width = w ?? (v < 24n ? 0 : v < 0x100n ? 1 : v < 0x10000n ? 2 : v < 0x100000000n ? 4 : 8)
  if (width === 0) { out.push(Uint8Array.of((major << 5) | Number(v))); return }
  const h = new Uint8Array(1 + width)
  h[0] = (major << 5) | WIDTH_MINOR[width]
  for (let i = 0; i < width; i++) h[width - i] = Number((v >> BigInt(8 * i)) & 0xffn)
  out.push(h)
}

function write (item: Item, out: Uint8Array[] = []): Uint8Array[] {
  switch (item.k) {
    case 'uint': head(out, 0, item.v, item.w); break
    case 'neg': head(out, 1, BigInt(-1) - BigInt(item.v), item.w); break
    case 'text': {
      const b = item.raw ?? Buffer.from(item.s, 'utf8')
      head(out, 3, b.length, item.w); out.push(b); break
    }
    case 'bytes': head(out, 2, item.b.length, item.w); out.push(item.b); break
    case 'array':
      if (item.indef === true) out.push(Uint8Array.of(0x9f)); else head(out, 4, item.items.length + (item.delta ?? 0), item.w)
      for (const x of item.items) write(x, out)
      if (item.indef === true) out.push(Uint8Array.of(0xff))
      break
    case 'map':
      if (item.indef === true) out.push(Uint8Array.of(0xbf)); else head(out, 5, item.entries.length + (item.delta ?? 0), item.w)
      for (const [k, v] of item.entries) { write(k, out); write(v, out) }
      if (item.indef === true) out.push(Uint8Array.of(0xff))
      break
    case 'tag': head(out, 6, item.tag); write(item.item, out); break
    case 'raw': out.push(item.b); break
  }
  return out
}

/** Bytes after the head byte that the head of `item` needs (0 = the count fits in the head byte). */
function minimalWidth (item: Item): number {
  const n = item.k === 'uint' ? Number(item.v) : item.k === 'text' ? Buffer.byteLength(item.s) : item.k === 'bytes' ? item.b.length : item.k === 'array' ? item.items.length : item.k === 'map' ? item.entries.length : 0
  return n < 24 ? 0 : n < 0x100 ? 1 : n < 0x10000 ? 2 : 4
}

const bytesOf = (item: Item): Uint8Array => new Uint8Array(Buffer.concat(write(item)))

function keyOrder (a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : (a < b ? -1 : a > b ? 1 : 0)
}

/** The canonical item tree of a value (what encodePacket writes). */
function tree (v: unknown): Item {
  if (typeof v === 'string') return { k: 'text', s: v }
  if (typeof v === 'number') return v >= 0 ? { k: 'uint', v } : { k: 'neg', v }
  if (typeof v === 'boolean') return raw(v ? 0xf5 : 0xf4)
  if (v instanceof Uint8Array) return { k: 'bytes', b: v }
  if (Array.isArray(v)) return { k: 'array', items: v.map(tree) }
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => keyOrder(a, b))
  return { k: 'map', entries: entries.map(([k, x]) => [{ k: 'text', s: k }, tree(x)]) }
}

/** Every item in a tree with a way to replace it. */
function slots (root: { item: Item }): Array<{ item: Item, set: (i: Item) => void }> {
  const out: Array<{ item: Item, set: (i: Item) => void }> = []
  const visit = (item: Item, set: (i: Item) => void): void => {
    out.push({ item, set })
    if (item.k === 'array') item.items.forEach((x, i) => visit(x, (n) => { item.items[i] = n }))
    if (item.k === 'map') item.entries.forEach((e) => { visit(e[0], (n) => { e[0] = n }); visit(e[1], (n) => { e[1] = n }) })
    if (item.k === 'tag') visit(item.item, (n) => { item.item = n })
  }
  visit(root.item, (n) => { root.item = n })
  return out
}

const float64 = (v: number): Item => { const b = Buffer.alloc(9); b[0] = 0xfb; b.writeDoubleBE(v, 1); return { k: 'raw', b } }
const float32 = (v: number): Item => { const b = Buffer.alloc(5); b[0] = 0xfa; b.writeFloatBE(v, 1); return { k: 'raw', b } }

/** Items the canonical encoder never writes, or writes only for invalid packets. */
function strangeItem (near: Item): Item {
  return pick<() => Item>([
    () => float64(pick([0, 1, 1.5, 1700000000000, -0, NaN, Infinity])),
    () => float32(1),
    () => raw(0xf9, 0x3c, 0x00), // half float 1.0
    () => raw(0xf6), // null
    () => raw(0xf7), // undefined (dag-cbor reads it as null)
    () => raw(0xf5),
    () => raw(0xf0), // a simple value
    () => raw(0xff), // a lone break
    () => ({ k: 'neg', v: -1 - int(1000) }),
    () => ({ k: 'uint', v: 2n ** 53n, w: 8 }),
    () => ({ k: 'uint', v: 2n ** 64n - 1n, w: 8 }),
    () => ({ k: 'tag', tag: pick([1, 42, 0]), item: near }),
    () => ({ k: 'text', s: '', raw: Uint8Array.from(pick([[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf4, 0x90, 0x80, 0x80], [0x61, 0x80, 0x62]])) }),
    () => ({ k: 'text', s: '\ufeff' + (near.k === 'text' ? near.s : 'x') }),
    () => ({ k: 'text', s: '' }),
    () => ({ k: 'text', s: 'x'.repeat(pick([25, 256, 257, 4096, 4097])) }),
    () => ({ k: 'text', s: near.k === 'text' ? near.s.toLowerCase() : 'MESSAGE' }),
    () => ({ k: 'bytes', b: near.k === 'text' ? Buffer.from(near.s) : randomBytes(3) }),
    () => near.k === 'bytes' ? { k: 'text', s: 'token' } : { k: 'bytes', b: randomBytes(2) },
    () => ({ k: 'map', entries: [] }),
    () => ({ k: 'array', items: [] }),
    () => ({ k: 'array', items: [near] }),
    () => ({ k: 'text', s: pick(keys).slice(0, -1) + pick(['1', 'l', 'z']) })
  ])()
}

const EXTRA_KEYS = ['extra', '__proto__', 'constructor', 'toString', '', 'ID', 'id\u0000', 'é', 'idx', 'file', 'grants2']

function mutate (root: { item: Item }): void {
  const all = slots(root)
  const maps = all.filter((s) => s.item.k === 'map')
  const lists = all.filter((s) => s.item.k === 'array' || s.item.k === 'map')
  const headed = all.filter((s) => ['uint', 'neg', 'text', 'bytes', 'array', 'map'].includes(s.item.k))
  if (maps.length === 0) { const s = pick(all); s.set(strangeItem(s.item)); return }
  pick<() => void>([
    () => { // a wider head than needed (or, 1 in 4, exactly as wide as needed)
      const s = pick(headed).item as Item & { w?: number }
      s.w = chance(0.25) ? undefined : pick([1, 2, 4, 8])
    },
    () => { // two keys swapped
      const m = pick(maps).item as Extract<Item, { k: 'map' }>
      if (m.entries.length < 2) return
      const i = int(m.entries.length - 1)
      const j = chance(0.5) ? i + 1 : int(m.entries.length)
      ;[m.entries[i], m.entries[j]] = [m.entries[j], m.entries[i]]
    },
    () => { // a key repeated, with the same or another value
      const m = pick(maps).item as Extract<Item, { k: 'map' }>
      if (m.entries.length === 0) return
      const e = pick(m.entries)
      m.entries.splice(int(m.entries.length + 1), 0, [e[0], chance(0.5) ? e[1] : strangeItem(e[1])])
    },
    () => { const s = pick(all); s.set(strangeItem(s.item)) },
    () => { // an unknown key
      const m = pick(maps).item as Extract<Item, { k: 'map' }>
      const key: Item = chance(0.15) ? { k: 'uint', v: 1 } : { k: 'text', s: pick(EXTRA_KEYS) }
      const top = root.item as Extract<Item, { k: 'map' }>
      // sometimes a copy of the whole packet map (under __proto__ that becomes the decoded object's prototype)
      const value: Item = chance(0.3) && top.k === 'map' ? structuredClone(top) : pick([raw(0x01), { k: 'text', s: 'v' }, raw(0xf6)])
      m.entries.splice(int(m.entries.length + 1), 0, [key, value])
    },
    () => { const m = pick(maps).item as Extract<Item, { k: 'map' }>; if (m.entries.length > 0) m.entries.splice(int(m.entries.length), 1) },
    () => { const l = pick(lists).item as { indef?: boolean }; l.indef = true },
    () => { const l = pick(lists).item as { delta?: number }; l.delta = pick([-1, 1, 1000]) }
  ])()
}

// ---- outcomes ---------------------------------------------------------------

type Outcome = { ok: true, packet: Packet } | { ok: false, name: string, message: string, code: unknown, cause: string | undefined }

function outcome (decode: (b: Uint8Array) => Packet, bytes: Uint8Array): Outcome {
  try {
    return { ok: true, packet: decode(bytes) }
  } catch (err) {
    const e = err as Error & { code?: unknown }
    return { ok: false, name: e.name, message: e.message, code: e.code, cause: e.cause instanceof Error ? e.cause.message : undefined }
  }
}

/** Key order too (JSON rendering and re-encoding see it), all the way down. */
function keyPaths (v: unknown, at = ''): string[] {
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return []
  return Object.keys(v).flatMap((k) => [`${at}.${k}`, ...keyPaths((v as Record<string, unknown>)[k], `${at}.${k}`)])
}

function assertSame (bytes: Uint8Array, what: string): Outcome {
  const want = outcome(decodePacketViaDagCbor, bytes)
  const got = outcome(decodePacket, bytes)
  assert.deepStrictEqual(got, want, `${what}: ${Buffer.from(bytes).toString('hex').slice(0, 400)}`)
  if (got.ok && want.ok) assert.deepStrictEqual(keyPaths(got.packet), keyPaths(want.packet), what)
  return got
}

describe('packet - direct decoder against dag-cbor + validatePacket', () => {
  it('decodes thousands of random valid packets on the direct path, equal to the reference (values, key order, copied bytes)', () => {
    let proofs = 0
    for (let i = 0; i < 3000; i++) {
      const p = randomPacket()
      const bytes = encodePacket(p)
      const fast = decodeCanonicalPacket(bytes)
      assert.notEqual(fast, undefined, `packet ${i} did not take the direct path`)
      const ref = decodePacketViaDagCbor(bytes)
      assert.deepStrictEqual(fast, ref, `packet ${i}`)
      assert.deepStrictEqual(keyPaths(fast), keyPaths(ref), `packet ${i}`)
      for (const b of [...(fast?.proof?.grants ?? []), ...(fast?.proof?.lineage ?? [])]) {
        proofs++
        assert.notEqual(b.buffer, bytes.buffer, 'a proof token shares the packet buffer')
        assert.equal(Object.getPrototypeOf(b), Uint8Array.prototype)
      }
    }
    assert.ok(proofs > 1000, `only ${proofs} proof tokens were generated`)
  })

  it('reads Buffers and views at an offset the same way, and returns plain Uint8Array tokens', () => {
    for (let i = 0; i < 200; i++) {
      const p = randomPacket()
      p.proof = { grants: [randomBytes(40)], lineage: [randomBytes(0)] }
      const bytes = encodePacket(p)
      const ref = decodePacketViaDagCbor(bytes)
      const pool = Buffer.alloc(bytes.length + 20, 0xee)
      pool.set(bytes, 7)
      for (const input of [Buffer.from(bytes), pool.subarray(7, 7 + bytes.length), new Uint8Array(pool.buffer, pool.byteOffset + 7, bytes.length)]) {
        const fast = decodeCanonicalPacket(input)
        assert.deepStrictEqual(fast, ref)
        assert.equal(Object.getPrototypeOf(fast?.proof?.grants?.[0]), Uint8Array.prototype)
        input.fill(0) // the decoded packet does not see later writes to the input's memory
        assert.deepStrictEqual(fast, ref)
        input.set(bytes)
      }
    }
  })

  it('gives the same outcome (packet, or error class, message, code and cause) for structurally mutated packets', () => {
    const tally = { direct: 0, fallbackAccepted: 0, rejected: 0 }
    for (let i = 0; i < 6000; i++) {
      const root = { item: tree(encodePacketValue(randomPacket(true))) }
      for (let m = 0, n = 1 + int(3); m < n; m++) mutate(root)
      const bytes = bytesOf(root.item)
      if (bytes.byteLength > MAX_PACKET_BYTES) continue
      const got = assertSame(bytes, `mutation ${i}`)
      if (!got.ok) tally.rejected++
      else if (decodeCanonicalPacket(bytes) !== undefined) tally.direct++
      else tally.fallbackAccepted++
    }
    // the mutations reach every outcome: direct accepts, accepts only dag-cbor makes, rejects
    assert.ok(tally.direct > 100 && tally.fallbackAccepted > 100 && tally.rejected > 1000, JSON.stringify(tally))
  })

  it('gives the same outcome for random byte flips, truncations and trailing bytes', () => {
    let rejected = 0
    for (let i = 0; i < 3000; i++) {
      const bytes = encodePacket(randomPacket(true))
      const flipped = Uint8Array.from(bytes)
      for (let f = 0, n = 1 + int(3); f < n; f++) flipped[int(flipped.length)] = chance(0.5) ? int(256) : flipped[int(flipped.length)] ^ (1 << int(8))
      const trailing = new Uint8Array(bytes.length + 1 + int(4))
      trailing.set(bytes)
      trailing.set(randomBytes(trailing.length - bytes.length), bytes.length)
      for (const [what, b] of [['flip', flipped], ['truncated', bytes.subarray(0, int(bytes.length))], ['trailing', trailing]] as const) {
        if (!assertSame(b, `${what} ${i}`).ok) rejected++
      }
    }
    assert.ok(rejected > 5000, `only ${rejected} rejected`)
  })

  it('rejects a non-minimal head anywhere, as dag-cbor strict decode does', () => {
    const p: Packet = { id: ulid(), from: keys[0], to: keys[1], signal: 'ESCALATE', scope: { files: ['a'], zone: 'project' }, payload: { options: ['x'] }, ts: 5, proof: { grants: [new Uint8Array([1])] } }
    const canonical = tree(encodePacketValue(p))
    assert.deepEqual(bytesOf(canonical), encodePacket(p))
    const count = slots({ item: canonical }).filter((s) => s.item.k !== 'raw').length
    let cases = 0
    for (let at = 0; at < count; at++) {
      const item = slots({ item: canonical }).filter((x) => x.item.k !== 'raw')[at].item
      for (const w of [1, 2, 4, 8].filter((w) => w > minimalWidth(item))) {
        const root = { item: tree(encodePacketValue(p)) }
        const s = slots(root).filter((x) => x.item.k !== 'raw')[at].item as { w?: number }
        s.w = w
        const bytes = bytesOf(root.item)
        assert.throws(() => decodePacket(bytes), (err: Error) => err.name === 'InvalidPacketError' && /more bytes than necessary/.test((err.cause as Error).message), `item ${at} width ${w}`)
        assertSame(bytes, `item ${at} width ${w}`)
        cases++
      }
    }
    assert.ok(cases > 60)
  })

  it('takes a remembered node id only when all its bytes are equal', () => {
    const p: Packet = { id: ulid(), from: keys[0], to: keys[1], signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: 1 }
    assert.equal(decodePacket(encodePacket(p)).from, keys[0])
    let valid = 0
    for (let at = 'did:key:z'.length; at < keys[0].length - 3; at++) {
      for (const c of ['1', 'A', 'z', 'l', '0']) {
        const from = keys[0].slice(0, at) + c + keys[0].slice(at + 1)
        if (from === keys[0]) continue
        // same length and last bytes as the remembered id: the same memo slot, different bytes
        const bytes = bytesOf(tree({ ...encodePacketValue(p), from }))
        const got = assertSame(bytes, `from ${from}`)
        if (got.ok) { valid++; assert.equal(got.packet.from, from) }
        assert.equal(decodePacket(encodePacket(p)).from, keys[0])
      }
    }
    assert.ok(valid > 20, `${valid} altered ids were valid`)
  })

  it('matches dag-cbor on the cases it decides by itself', () => {
    const base = (): Record<string, unknown> => encodePacketValue({ id: ulid(), from: keys[0], to: keys[1], signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: 1 })
    const withEntry = (key: string, value: Item): Uint8Array => {
      const t = tree(base()) as Extract<Item, { k: 'map' }>
      t.entries.push([{ k: 'text', s: key }, value])
      return bytesOf(t)
    }
    // a leading BOM is text: both decoders keep it (cborg's own TextDecoder dropped it), the direct one without falling back
    const bom = encodePacket({ ...base(), signal: 'ESCALATE', payload: { text: '\ufeffhi', options: ['\ufeff', '\ufeff\ufeffx'] }, session_id: '\ufeffs' } as unknown as Packet)
    assert.equal(decodePacket(bom).payload.text, '\ufeffhi')
    assert.deepEqual(decodeCanonicalPacket(bom)?.payload.options, ['\ufeff', '\ufeff\ufeffx'])
    assert.equal(decodePacketViaDagCbor(bom).session_id, '\ufeffs')
    assertSame(bom, 'bom')
    // invalid UTF-8 in a payload string: dag-cbor decodes it to U+FFFD
    const bad = tree(base()) as Extract<Item, { k: 'map' }>
    const payload = bad.entries.find(([k]) => k.k === 'text' && k.s === 'payload')?.[1] as Extract<Item, { k: 'map' }>
    payload.entries[0][1] = { k: 'text', s: '', raw: Uint8Array.from([0x68, 0xff, 0x69]) }
    assert.equal(decodePacket(bytesOf(bad)).payload.text, 'h\ufffdi')
    assertSame(bytesOf(bad), 'invalid utf-8')
    // an integral float ts is a safe integer to validatePacket
    const floatTs = tree(base()) as Extract<Item, { k: 'map' }>
    floatTs.entries = floatTs.entries.map(([k, v]) => [k, k.k === 'text' && k.s === 'ts' ? float64(1700000000000) : v])
    assert.equal(decodePacket(bytesOf(floatTs)).ts, 1700000000000)
    assertSame(bytesOf(floatTs), 'float ts')
    // __proto__ sets the decoded object's prototype, where validatePacket then finds fields
    const proto = { k: 'map', entries: [[{ k: 'text', s: '__proto__' }, tree(base())]] } as Item
    assertSame(bytesOf(proto), '__proto__')
    // unknown keys are ignored at the top level, refused in the payload
    assert.equal(decodePacket(withEntry('zzz', raw(0x01))).payload.text, 'hi')
    assertSame(withEntry('zzz', raw(0x01)), 'unknown key')
    assertSame(withEntry('id', { k: 'text', s: ulid() }), 'repeated id')
    assert.throws(() => decodePacket(withEntry('id', { k: 'text', s: ulid() })), (err: Error) => /repeat map key "id"/.test((err.cause as Error).message))
    for (const [key, value] of [['requires_reply', raw(0xf6)], ['priority', raw(0xf7)], ['from_name', { k: 'text', s: 'x'.repeat(257) }], ['from_name', { k: 'text', s: '😀'.repeat(129) }]] as const) {
      assertSame(withEntry(key, value as Item), `${key} ${JSON.stringify(value).slice(0, 40)}`)
    }
  })
})

/** A packet as the plain value encodePacket encodes (validated, undefined fields dropped). */
function encodePacketValue (p: Packet): Record<string, unknown> {
  return Object.fromEntries(Object.entries(decodePacketViaDagCbor(encodePacket(p))).filter(([, v]) => v !== undefined))
}
