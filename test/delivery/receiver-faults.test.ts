// Every rejection path on the receive path is handled (issue 17, item 2): the
// admission check throwing, the store refusing the append (a real StoreGuard
// over a real LevelDB), more failing frames than the window, and frames a
// receiver never takes. No unhandled rejection, every frame answered.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as lp from 'it-length-prefixed'
import { pushable } from 'it-pushable'
import type { Connection, Stream } from '@libp2p/interface'
import { PacketReceiver, type Admit, type AdmitNow, type Denial } from '../../src/delivery/receiver.js'
import { RECEIVER_PENDING_FRAMES } from '../../src/delivery/constants.js'
import { decodeFrame, encodeFrame, type AckResult, type Frame } from '../../src/delivery/frame.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { decodePacket, encodePacket } from '../../src/packet/codec.js'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { InboxStore } from '../../src/store/inbox.js'
import { MIB, StoreGuard } from '../../src/store/store-guard.js'
import { ulid } from '../../src/util/ulid.js'

const FROM = generateNodeKey().id
const BOB = generateNodeKey().id
const CAROL = generateNodeKey().id

function packet (to: string, text: string): Uint8Array {
  return encodePacket({ id: ulid(), from: FROM, to, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text }, ts: Date.now() })
}

/** One packet stream into a receiver: frames in, decoded frames out. */
function streamInto (receiver: PacketReceiver): { send: (f: Frame) => void, end: () => void, replies: (n: number) => Promise<Frame[]>, done: Promise<void> } {
  const input = pushable<Uint8Array>()
  const replies: Frame[] = []
  let wake: (() => void) | undefined
  const stream = {
    source: lp.encode(input),
    sink: async (src: AsyncIterable<Uint8Array | { subarray: () => Uint8Array }>) => {
      for await (const chunk of lp.decode(src as AsyncIterable<Uint8Array>)) { replies.push(decodeFrame(chunk.subarray())); wake?.() }
    },
    abort: () => { input.end() }
  } as unknown as Stream
  const connection = { remotePeer: { toString: () => 'peer-x' } } as unknown as Connection
  const done = receiver.handle({ stream, connection })
  return {
    send: (f) => input.push(encodeFrame(f)),
    end: () => input.end(),
    done,
    replies: async (n) => {
      const deadline = Date.now() + 20_000
      while (replies.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${replies.length} of ${n} replies`)
        await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 200) })
      }
      return replies.slice(0, n)
    }
  }
}

const codes = (f: Frame): string[] => f.t === 'a' ? f.r.map((r: AckResult) => 's' in r ? `seq ${r.s}` : `${r.c}${r.r === true ? ' (retry)' : ''}`) : [`error ${f.t === 'e' ? f.c : ''}`]

describe('receiver - every rejection path on the receive path is handled', () => {
  let dir: string
  let db: RawDb
  let guard: StoreGuard
  let inbox: InboxStore
  /** free bytes the guard measures: under REOPEN_MIN_FREE_BYTES a faulted store waits (as on a full disk) */
  let free = 1024 * MIB
  const unhandled: unknown[] = []
  const onUnhandled = (err: unknown): void => { unhandled.push(err) }

  beforeEach(async () => {
    free = 1024 * MIB
    dir = mkdtempSync(join(tmpdir(), 'amr-'))
    db = await openDb(join(dir, 'store'))
    guard = new StoreGuard({ path: dir, minFreeBytes: 0, reopen: async () => { await db.close(); await db.open() }, log: () => {}, onFatal: () => {}, measure: async () => free })
    await guard.start()
    inbox = new InboxStore(db, new Committer(batchTarget(db), 'batch', guard), 1000)
    unhandled.length = 0
    process.on('unhandledRejection', onUnhandled)
  })

  afterEach(async () => {
    process.off('unhandledRejection', onUnhandled)
    guard.stop()
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const receiver = (admit: Admit = async () => null): PacketReceiver => new PacketReceiver({ inbox, admit, log: () => {} })

  it('admitted without a wait (admitNow) or through admit alone: the same acks, inbox entries and denials, in the same order', async () => {
    // the decision by the packet's text; "wait": admitNow leaves it to admit; "throw": admitNow fails, admit decides
    const decide = (text: string): Denial | null => text.startsWith('deny') ? { code: 'DENIED', reason: `no ${text}` } : text.startsWith('later') ? { code: 'LATER', reason: 'not now', retry: true } : null
    const textOf = (p: { payload: { text?: string } }): string => p.payload.text ?? ''
    const admit: Admit = async (p) => decide(textOf(p))
    const admitNow: AdmitNow = (p) => {
      const t = textOf(p)
      if (t.startsWith('wait')) return undefined
      if (t.startsWith('throw')) throw new Error('no quick answer')
      return decide(t)
    }
    const texts = [['ok1', 'deny1', 'ok2'], ['wait1', 'ok3', 'deny2', 'wait2'], ['throw1', 'ok4'], ['later1', 'ok5'], ['ok6', 'deny3', 'wait3', 'ok7'], ['ok8']]
    const other = await openDb(join(dir, 'store-2'))
    try {
      const inboxes = [inbox, new InboxStore(other, new Committer(batchTarget(other), 'batch'), 1000)]
      const outcome = []
      for (const [k, withNow] of [[0, true], [1, false]] as const) {
        const denied: string[] = []
        const r = new PacketReceiver({ inbox: inboxes[k], admit, ...(withNow ? { admitNow } : {}), onDenied: (p, d) => denied.push(`${textOf(p)} ${d.code}`), log: () => {} })
        const s = streamInto(r)
        // to BOB, and CAROL's later1 latches CAROL (retry) for the rest of the stream; one malformed packet
        texts.forEach((frame, b) => s.send({ t: 'p', b: b + 1, p: frame.map((t) => t === 'ok2' ? Uint8Array.of(0xa0) : packet(t.startsWith('later') || t === 'ok5' || t === 'ok6' ? CAROL : BOB, t)) }))
        const replies = await s.replies(texts.length)
        s.end()
        await s.done
        const stored = async (node: string): Promise<string[]> => (await inboxes[k].read(node, 0, 100)).map((e) => `${e.seq} ${textOf(decodePacket(e.packet))}`)
        outcome.push({ acks: replies.map(codes), denied, bob: await stored(BOB), carol: await stored(CAROL) })
      }
      assert.deepEqual(outcome[0], outcome[1])
      assert.deepEqual(outcome[0].acks[0], ['seq 1', 'DENIED', outcome[0].acks[0][2]])
      assert.ok(outcome[0].acks[3].includes('LATER (retry)') && outcome[0].acks[4].includes('RETRY (retry)'), JSON.stringify(outcome[0].acks))
      assert.deepEqual(outcome[0].denied, ['deny1 DENIED', 'deny2 DENIED', 'deny3 DENIED'])
      assert.deepEqual(outcome[0].bob.map((e) => e.split(' ')[1]), ['ok1', 'wait1', 'ok3', 'wait2', 'throw1', 'ok4', 'wait3', 'ok7', 'ok8'])
    } finally {
      await other.close()
    }
    assert.deepEqual(unhandled, [])
  })

  it('an admission check that throws answers retry-later, and stores nothing', async () => {
    const s = streamInto(receiver(async () => { throw new Error('store is reopening') }))
    s.send({ t: 'p', b: 1, p: [packet(BOB, 'one')] })
    const [ack] = await s.replies(1)
    assert.deepEqual(codes(ack), ['INTERNAL (retry)'])
    s.end()
    await s.done
    assert.equal((await inbox.read(BOB, 0, 10)).length, 0)
    assert.deepEqual(unhandled, [])
  })

  it('a store that refuses the append (full disk) answers STORE_FULL retry-later for the frame and RETRY for later packets to the same node; the stream lives on; after the reopen a new stream stores them in order', async () => {
    free = MIB
    guard.fault(Object.assign(new Error('IO error: 000003.log: No space left on device'), { code: 'LEVEL_IO_ERROR' }))
    const s = streamInto(receiver())
    s.send({ t: 'p', b: 1, p: [packet(BOB, 'b1'), packet(CAROL, 'c1')] })
    s.send({ t: 'p', b: 2, p: [packet(BOB, 'b2')] })
    const [a1, a2] = await s.replies(2)
    assert.deepEqual(codes(a1), ['STORE_FULL (retry)', 'STORE_FULL (retry)'])
    assert.deepEqual(codes(a2), ['RETRY (retry)'])
    s.end()
    await s.done
    free = 1024 * MIB
    const deadline = Date.now() + 10_000
    while (guard.state !== 'ok' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(guard.state, 'ok')
    const t = streamInto(receiver())
    t.send({ t: 'p', b: 1, p: [packet(BOB, 'b1'), packet(BOB, 'b2')] })
    assert.deepEqual(codes((await t.replies(1))[0]), ['seq 1', 'seq 2'])
    t.end()
    await t.done
    assert.deepEqual(unhandled, [])
  })

  it(`more failing frames than the window (${RECEIVER_PENDING_FRAMES}) are all answered, none left unhandled`, async () => {
    free = MIB
    guard.fault(new Error('IO error: Input/output error'))
    const s = streamInto(receiver())
    const n = RECEIVER_PENDING_FRAMES * 3
    for (let b = 1; b <= n; b++) s.send({ t: 'p', b, p: [packet(`${b % 2 === 0 ? BOB : CAROL}`, `m${b}`)] })
    const replies = await s.replies(n)
    assert.deepEqual(replies.map((f) => f.t === 'a' ? f.b : -1), Array.from({ length: n }, (_, k) => k + 1), 'answered in order')
    assert.deepEqual(codes(replies[0]), ['STORE_FAULT (retry)'])
    assert.ok(replies.every((f) => f.t === 'a' && f.r.every((r) => 'c' in r && r.r === true)), 'every refusal is retry-later')
    s.end()
    await s.done
    assert.deepEqual(unhandled, [])
  })

  it('an ack or error frame sent to a receiver answers MALFORMED_FRAME (it was INTERNAL)', async () => {
    for (const f of [{ t: 'a', b: 1, r: [{ s: 1 }] }, { t: 'e', c: 'X', m: 'y' }] as Frame[]) {
      const s = streamInto(receiver())
      s.send(f)
      const [reply] = await s.replies(1)
      assert.ok(reply.t === 'e')
      assert.equal(reply.c, 'MALFORMED_FRAME')
      await s.done
    }
    assert.deepEqual(unhandled, [])
  })
})
