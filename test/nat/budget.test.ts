// What a link may send over a relayed (limited) connection before its relay
// cuts it, and which connection a new stream reuses: pure parts, on
// connection-shaped values whose limits count down as libp2p's do.
import { strict as assert } from 'node:assert'
import type { Connection, PeerId } from '@libp2p/interface'
import { FRAME_BYTES } from '../../src/delivery/constants.js'
import { FRAMES_PER_CIRCUIT, LinkBudget, MIN_FRAME_BYTES, RESERVE_MIN, frameOf } from '../../src/delivery/link-budget.js'
import { SPENT_BYTES, SPENT_TIME, circuitLeft, isSpent, reusable, spentTime } from '../../src/util/streams.js'
import type { OutboxEntry } from '../../src/store/outbox.js'

const MIB = 1024 * 1024
const NOW = 1_800_000_000_000

/** A connection whose limits read `bytes` and `seconds` left (undefined: that limit is absent), opened `ageMs` ago. */
function conn (bytes: number | undefined, seconds: number | undefined, opts: { ageMs?: number, status?: Connection['status'], id?: string } = {}): Connection & { left: { bytes?: number } } {
  const left = { bytes }
  let limits: Record<string, unknown> | undefined
  if (bytes !== undefined || seconds !== undefined) {
    limits = seconds !== undefined ? { seconds } : {}
    // a live count, as libp2p's limit tracker gives it
    if (bytes !== undefined) Object.defineProperty(limits, 'bytes', { get: () => BigInt(left.bytes ?? 0), enumerable: true })
  }
  return { id: opts.id ?? 'c', status: opts.status ?? 'open', limits, timeline: { open: NOW - (opts.ageMs ?? 0) }, left } as unknown as Connection & { left: { bytes?: number } }
}

function entries (sizes: number[]): OutboxEntry[] {
  return sizes.map((n, i) => ({ key: String(i).padStart(4, '0'), packet: new Uint8Array(n), exp: Number.MAX_SAFE_INTEGER }) as unknown as OutboxEntry)
}

describe('nat - relayed link budget and connection reuse (units)', () => {
  it('circuitLeft / isSpent - bytes and time left; spent below SPENT_BYTES or a quarter of the duration (at most SPENT_TIME)', () => {
    assert.equal(circuitLeft(conn(undefined, undefined)), undefined)
    assert.deepEqual(circuitLeft(conn(MIB, 15)), { bytes: MIB, ms: 15_000 })
    const table: Array<[number | undefined, number | undefined, number, boolean]> = [
      [undefined, undefined, 0, false], // direct
      [MIB, undefined, 0, false],
      [SPENT_BYTES - 1, undefined, 0, true],
      [SPENT_BYTES, undefined, 0, false],
      [undefined, 60, 0, false],
      [undefined, 4, 56_000, true], // 5 s of 60: below SPENT_TIME
      [undefined, 6, 54_000, false],
      [undefined, 3, 9_000, false], // a 12 s circuit: spent below 3 s
      [undefined, 2, 10_000, true]
    ]
    for (const [bytes, seconds, age, spent] of table) assert.equal(isSpent(conn(bytes, seconds, { ageMs: age }), NOW), spent, `${String(bytes)} bytes, ${String(seconds)} s, age ${age}`)
    assert.equal(spentTime(conn(undefined, 60), NOW), SPENT_TIME)
    assert.equal(spentTime(conn(undefined, undefined), NOW), 0)
  })

  it('LinkBudget - none on a direct connection; frames sized from the limit; sends stop before the reserve', () => {
    assert.equal(LinkBudget.of(conn(undefined, undefined)), undefined)
    assert.equal(LinkBudget.of(undefined), undefined)
    assert.equal(LinkBudget.of(conn(undefined, 600))?.frameBytes, FRAME_BYTES)
    assert.equal(LinkBudget.of(conn(256 * MIB, 1800))?.frameBytes, FRAME_BYTES)
    assert.equal(LinkBudget.of(conn(64 * 1024, 60))?.frameBytes, (64 * 1024 - RESERVE_MIN) / FRAMES_PER_CIRCUIT)
    assert.equal(LinkBudget.of(conn(20 * 1024, 60))?.frameBytes, MIN_FRAME_BYTES)
    const c = conn(MIB, 15)
    const b = LinkBudget.of(c) as LinkBudget
    assert.ok(b.frameBytes * FRAMES_PER_CIRCUIT <= MIB - MIB / 8 && b.frameBytes >= 100 * 1024, String(b.frameBytes))
    let sent = 0
    while (b.take(b.frameBytes, NOW)) sent += b.frameBytes
    assert.ok(sent >= (FRAMES_PER_CIRCUIT - 2) * b.frameBytes && sent <= MIB - MIB / 8, `sent ${sent} of ${MIB}`)
    // what the connection reports left also counts (the other direction's traffic shares the limit)
    const d = conn(MIB, 15)
    const bd = LinkBudget.of(d) as LinkBudget
    assert.equal(bd.take(10_000, NOW), true)
    d.left.bytes = RESERVE_MIN * 8
    assert.equal(bd.take(bd.frameBytes, NOW), false)
  })

  it('LinkBudget - the first frame always goes unless spent (a packet larger than the circuit is retried, not rotated for ever)', () => {
    const b = LinkBudget.of(conn(128 * 1024, 60)) as LinkBudget
    assert.equal(b.take(4 * MIB, NOW), true)
    assert.equal(b.take(1, NOW), false)
    assert.equal((LinkBudget.of(conn(SPENT_BYTES - 1, 60)) as LinkBudget).take(1, NOW), false)
    assert.equal((LinkBudget.of(conn(MIB, 1, { ageMs: 59_000 })) as LinkBudget).take(1, NOW), false)
  })

  it('frameOf - packets up to maxBytes, at least one, at most FRAME_PACKETS', () => {
    const list = entries([100, 100, 100, 100])
    assert.equal(frameOf(list, 250).length, 2)
    assert.equal(frameOf(list, 400), list)
    assert.equal(frameOf(entries([1000, 10]), 500).length, 1)
    assert.equal(frameOf(entries(Array.from({ length: 300 }, () => 1)), MIB).length, 256)
  })

  it('reusable - a direct connection first, else the relayed one with most left that is not spent, else a forced dial past spent ones', () => {
    const peer = {} as PeerId
    const of = (cs: Connection[]): { getConnections: () => Connection[] } => ({ getConnections: () => cs })
    const direct = conn(undefined, undefined, { id: 'direct' })
    const big = conn(900_000, 100, { id: 'big' })
    const small = conn(100_000, 100, { id: 'small' })
    const spent = conn(SPENT_BYTES - 1, 100, { id: 'spent' })
    const closing = conn(MIB, 100, { id: 'closing', status: 'closing' })
    assert.deepEqual(reusable(of([small, direct, big]), peer), { connection: direct, force: false })
    assert.deepEqual(reusable(of([small, big, spent]), peer), { connection: big, force: false })
    assert.deepEqual(reusable(of([spent, closing]), peer), { connection: undefined, force: true })
    assert.deepEqual(reusable(of([]), peer), { connection: undefined, force: false })
    // a closing direct connection: libp2p's own dial decides (it does not redial a host that just hung up)
    assert.deepEqual(reusable(of([conn(undefined, undefined, { status: 'closing' })]), peer), { connection: undefined, force: false })
  })
})
