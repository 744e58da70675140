import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, fromJsonBytes, openDb, toJsonBytes, type RawDb } from '../../src/store/db.js'
import { InboxStore, decodeInboxValue, encodeDedupValue, encodeInboxValue, type AppendResult } from '../../src/store/inbox.js'
import { ulidTime, ulidTimePrefix } from '../../src/store/ulid-time.js'
import { ulid } from '../../src/util/ulid.js'

const A = 'did:key:zNodeA'
const B = 'did:key:zNodeB'
const HOUR = 3_600_000

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)
const text = (b: Uint8Array): string => new TextDecoder().decode(b)
const seqs = (rs: AppendResult[]): number[] => rs.map((r) => ('seq' in r ? r.seq : -1))

/** A ULID minted at `ms` (random part fixed), without touching the monotonic generator. */
const idAt = (ms: number, tail = '0000000000000000'): string => ulidTimePrefix(ms) + tail

describe('store - InboxStore', () => {
  let dir: string
  let db: RawDb
  let inbox: InboxStore

  const open = async (cap = 1000, window = HOUR): Promise<void> => {
    db = await openDb(join(dir, 'store'))
    inbox = new InboxStore(db, new Committer(batchTarget(db), 'batch'), cap, window)
  }
  const reopen = async (cap?: number, window?: number): Promise<void> => { await db.close(); await open(cap, window) }

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-inbox-')); await open() })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('seq - strictly increasing and gap-free per node, independent across nodes, also across concurrent appends and a reopen', async () => {
    const items = (node: string, n: number): Array<{ nodeId: string, packetId: string, packet: Uint8Array }> =>
      Array.from({ length: n }, (_, i) => ({ nodeId: node, packetId: ulid(), packet: bytes(`${node}-${i}`) }))
    const [r1, r2, r3] = await Promise.all([inbox.append(items(A, 5)), inbox.append(items(B, 3)), inbox.append(items(A, 4))])
    assert.deepEqual(seqs(r1), [1, 2, 3, 4, 5])
    assert.deepEqual(seqs(r2), [1, 2, 3])
    assert.deepEqual(seqs(r3), [6, 7, 8, 9])
    await reopen()
    assert.deepEqual(seqs(await inbox.append(items(A, 2))), [10, 11])
    const read = await inbox.read(A, 0, 100)
    assert.deepEqual(read.map((e) => e.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    assert.deepEqual(read.slice(0, 5).map((e) => text(e.packet)), [0, 1, 2, 3, 4].map((i) => `${A}-${i}`))
  })

  it('cursor - read after the cursor, ack moves it forward only, and it is durable across a reopen', async () => {
    await inbox.append(Array.from({ length: 10 }, (_, i) => ({ nodeId: A, packetId: ulid(), packet: bytes(String(i)) })))
    assert.equal(await inbox.ack(A, 4), 4)
    assert.equal(await inbox.ack(A, 2), 4, 'never backward')
    assert.equal(await inbox.ack(A, 6), 6)
    await reopen()
    assert.deepEqual(await inbox.info(A), { last: 10, cursor: 6, unacked: 4 })
    assert.equal(await inbox.ack(A, 99), 10, 'clamped to the last seq')
    await reopen()
    assert.deepEqual(await inbox.info(A), { last: 10, cursor: 10, unacked: 0 })
    const [r] = await inbox.append([{ nodeId: A, packetId: ulid(), packet: bytes('x') }])
    assert.deepEqual(r, { seq: 11, duplicate: false })
    assert.deepEqual((await inbox.read(A, 6, 2)).map((e) => e.seq), [7, 8])
  })

  it('read - a byte budget ends the page early (always at least one entry); reading on after its last seq continues in order', async () => {
    const big = new Uint8Array(100_000).fill(0x61)
    await inbox.append(Array.from({ length: 10 }, () => ({ nodeId: A, packetId: ulid(), packet: big })))
    const first = await inbox.read(A, 0, 1000, 250_000)
    assert.deepEqual(first.map((e) => e.seq), [1, 2, 3], 'stops at the entry that reaches 250 kB')
    const tiny = await inbox.read(A, 3, 1000, 1)
    assert.deepEqual(tiny.map((e) => e.seq), [4], 'one entry even when it alone exceeds the budget')
    const rest = await inbox.read(A, 4, 1000, 250_000)
    assert.deepEqual(rest.map((e) => e.seq), [5, 6, 7])
    assert.equal((await inbox.read(A, 0, 1000)).length, 10, 'no budget: the limit alone')
    assert.ok(first.every((e) => e.packet.byteLength === big.byteLength))
  })

  it('dedup - the same message id is stored once: within a call, across calls, and after a reopen; the duplicate answer carries the original seq', async () => {
    const id = ulid()
    const res = await inbox.append([
      { nodeId: A, packetId: id, packet: bytes('one') },
      { nodeId: A, packetId: id, packet: bytes('one again') }
    ])
    assert.deepEqual(res, [{ seq: 1, duplicate: false }, { seq: 1, duplicate: true }])
    const concurrent = await Promise.all([inbox.append([{ nodeId: A, packetId: id, packet: bytes('x') }]), inbox.append([{ nodeId: A, packetId: id, packet: bytes('y') }])])
    assert.deepEqual(concurrent.flat(), [{ seq: 1, duplicate: true }, { seq: 1, duplicate: true }])
    await reopen()
    assert.deepEqual(await inbox.append([{ nodeId: A, packetId: id, packet: bytes('after restart') }]), [{ seq: 1, duplicate: true }])
    assert.deepEqual((await inbox.read(A, 0, 10)).map((e) => text(e.packet)), ['one'])
  })

  it('dedup - ids out of mint order, resent after a reopen, or past the in-memory id memory (16,384) are still found in the store; new ids below them are stored', async () => {
    const now = Date.now()
    const high = idAt(now, 'ZZZZZZZZZZZZZZZZ')
    const low = idAt(now - 1000)
    const r1 = await inbox.append([{ nodeId: A, packetId: high, packet: bytes('high') }, { nodeId: A, packetId: low, packet: bytes('low') }])
    assert.deepEqual(seqs(r1), [1, 2])
    await reopen()
    const r2 = await inbox.append([
      { nodeId: A, packetId: low, packet: bytes('low again') },
      { nodeId: A, packetId: high, packet: bytes('high again') },
      { nodeId: A, packetId: idAt(now - 500), packet: bytes('new, below the newest stored id') }
    ])
    assert.deepEqual(r2, [{ seq: 2, duplicate: true }, { seq: 1, duplicate: true }, { seq: 3, duplicate: false }])
    // push the first ids out of the in-memory memory of stored ids
    await reopen(100_000)
    const many = Array.from({ length: 16_400 }, () => ulid())
    for (let k = 0; k < many.length; k += 2000) {
      await inbox.append(many.slice(k, k + 2000).map((id) => ({ nodeId: B, packetId: id, packet: bytes('x') })))
    }
    const again = await inbox.append([
      { nodeId: B, packetId: many[0], packet: bytes('resent') },
      { nodeId: B, packetId: many[15], packet: bytes('resent') },
      { nodeId: A, packetId: low, packet: bytes('resent') },
      { nodeId: B, packetId: many[many.length - 1], packet: bytes('resent') },
      { nodeId: B, packetId: ulid(), packet: bytes('fresh') }
    ])
    assert.deepEqual(again, [
      { seq: 1, duplicate: true },
      { seq: 16, duplicate: true },
      { seq: 2, duplicate: true },
      { seq: 16_400, duplicate: true },
      { seq: 16_401, duplicate: false }
    ])
    assert.equal((await inbox.info(B)).last, 16_401)
    assert.deepEqual((await inbox.read(A, 0, 10)).map((e) => text(e.packet)), ['high', 'low', 'new, below the newest stored id'])
  })

  it('values - inbox values round trip from pooled buffers; dedup values are byte for byte the JSON of {nodeId, seq}', () => {
    for (const size of [0, 1, 600, 70_000]) {
      const packet = new Uint8Array(size).map((_, i) => i % 251)
      const v = decodeInboxValue(encodeInboxValue(1_700_000_000_123.5, packet))
      assert.equal(v.r, 1_700_000_000_123.5)
      assert.deepEqual([...v.p], [...packet])
    }
    for (const nodeId of [A, B, A, 'did:key:"quoted"\\ünï']) {
      for (const seq of [0, 7, 1_000_000, Number.MAX_SAFE_INTEGER]) {
        const v = encodeDedupValue(nodeId, seq)
        assert.deepEqual([...v], [...toJsonBytes({ nodeId, seq })])
        assert.deepEqual(fromJsonBytes(v), { nodeId, seq })
      }
    }
  })

  it('dedup window - ids older than the window are refused as STALE_PACKET; pruneDedup forgets exactly those and leaves the id generator alone', async () => {
    await reopen(1000, HOUR)
    const now = Date.now()
    const fresh = idAt(now - HOUR / 2)
    const [ok, stale] = await inbox.append([
      { nodeId: A, packetId: fresh, packet: bytes('fresh') },
      { nodeId: A, packetId: idAt(now - 2 * HOUR), packet: bytes('stale') }
    ])
    assert.deepEqual(ok, { seq: 1, duplicate: false })
    assert.ok('error' in stale)
    assert.equal(stale.error.code, 'STALE_PACKET')
    // an id remembered long ago (window was larger then) and one within the window
    await reopen(1000, 10 * HOUR)
    const old = idAt(now - 3 * HOUR)
    await inbox.append([{ nodeId: B, packetId: old, packet: bytes('old') }])
    await reopen(1000, HOUR)
    const before = ulid()
    assert.equal(await inbox.pruneDedup(now), 1, 'only the id older than the window goes')
    assert.ok(ulidTime(ulid()) >= ulidTime(before), 'monotonic ulid state untouched')
    assert.deepEqual(await inbox.append([{ nodeId: A, packetId: fresh, packet: bytes('again') }]), [{ seq: 1, duplicate: true }])
  })

  it('cap - past inbox_per_node unacked packets the node refuses with INBOX_FULL, and the stream latch keeps later ones out (FIFO)', async () => {
    await reopen(3)
    const latch = new Set<string>()
    const mk = (node: string, t: string): { nodeId: string, packetId: string, packet: Uint8Array } => ({ nodeId: node, packetId: ulid(), packet: bytes(t) })
    const res = await inbox.append([mk(A, '1'), mk(A, '2'), mk(A, '3'), mk(A, '4'), mk(B, 'b1')], { latch })
    assert.deepEqual(res.slice(0, 3), [{ seq: 1, duplicate: false }, { seq: 2, duplicate: false }, { seq: 3, duplicate: false }])
    const full = res[3]
    assert.ok('error' in full && full.error.code === 'INBOX_FULL')
    assert.match(('error' in full ? full.error.message : ''), /inbox of did:key:zNodeA is full \(3 unacknowledged packets\)/)
    assert.deepEqual(res[4], { seq: 1, duplicate: false }, 'other nodes unaffected')
    await inbox.ack(A, 2)
    const [after] = await inbox.append([mk(A, '5')], { latch })
    assert.ok('error' in after, 'latched for the rest of this stream even though there is room now')
    const [fresh] = await inbox.append([mk(A, '4 retried')])
    assert.deepEqual(fresh, { seq: 4, duplicate: false })
  })

  it('prune - deletes acked entries past age/keep, never unacked ones; seq numbering continues after everything acked was pruned', async () => {
    await reopen(20_000)
    await inbox.append(Array.from({ length: 12_000 }, (_, i) => ({ nodeId: A, packetId: ulid(), packet: bytes(String(i)) })))
    await inbox.ack(A, 11_000)
    assert.equal(await inbox.prune(A, 0, 100), 10_900, 'beyond retention_keep, in chunks until done')
    const left = await inbox.read(A, 0, 20_000)
    assert.equal(left[0].seq, 10_901)
    assert.equal(left.length, 1100)
    assert.equal(await inbox.prune(A, Date.now() + 1, 1000), 100, 'older than retention_age: all acked go, unacked stay')
    assert.equal((await inbox.read(A, 0, 20_000))[0].seq, 11_001)
    await inbox.ack(A, 12_000)
    assert.equal(await inbox.prune(A, Date.now() + 1, 1000), 1000)
    await reopen(20_000)
    assert.deepEqual(await inbox.info(A), { last: 12_000, cursor: 12_000, unacked: 0 })
    assert.deepEqual(seqs(await inbox.append([{ nodeId: A, packetId: ulid(), packet: bytes('next') }])), [12_001])
  })
})
