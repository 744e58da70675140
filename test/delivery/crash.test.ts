// kill -9 of a daemon in the middle of a stream: nothing acknowledged is lost
// or duplicated (ARCHITECTURE §5, issue 3).
import { strict as assert } from 'node:assert'
import type { ControlClient } from '../../src/control/client.js'
import { openDb } from '../../src/store/db.js'
import { waitFor } from '../utils/hosts.js'
import { duplicates, inboxOnDisk, inboxRows, perPairOrdered, sendSeq, startPair, status, waitGone, type Pair } from './helpers.js'

const SENDERS = ['s0', 's1', 's2', 's3']

/** A gate the send loops pass before each send. */
class Gate {
  private held?: Promise<void>
  private open?: () => void
  hold (): void { this.held ??= new Promise((resolve) => { this.open = resolve }) }
  release (): void { this.open?.(); this.held = undefined }
  async pass (): Promise<void> { await this.held }
}

describe('delivery - kill -9 mid-stream', function () {
  this.timeout(150_000)
  let pair: Pair | undefined
  let clients: ControlClient[] = []

  afterEach(async () => {
    for (const c of clients) c.close()
    clients = []
    await pair?.a.cleanup()
    await pair?.b.cleanup()
    pair = undefined
  })

  it('receiver killed while 2,000 stream in: everything the sender saw acked is on its disk exactly once; the rest arrives after restart; per-pair order; no duplicates', async () => {
    pair = await startPair({ senders: SENDERS })
    const { a, b } = pair
    const bobId = (await status(b)).nodes.find((n) => n.name === 'bob')?.id ?? ''
    clients = await Promise.all(SENDERS.map(async () => await a.client()))
    const gate = new Gate()
    let busy = 0
    const sent = SENDERS.map((): string[] => [])
    const loops = SENDERS.map(async (s, i) => {
      for (let k = 0; k < 500; k++) {
        await gate.pass()
        busy++
        try { await sendSeq(clients[i], s, 'bob', [`${s} ${k}`], sent[i]) } finally { busy-- }
      }
    })
    await waitFor(async () => ((await status(b)).nodes[0]?.inbox.last ?? 0) >= 300 || undefined, 60_000, 'the stream to get going')
    b.kill9()
    await waitGone(b.pid)
    // freeze the picture: no new sends, no acks can come from a dead host
    gate.hold()
    await waitFor(async () => busy === 0, 10_000, 'in-flight sends to return')
    await waitFor(async () => (await status(a)).links[b.peerId] !== 'open' || undefined, 20_000, 'a to notice the dead stream')
    const total = sent.flat().length
    const waiting = (await status(a)).outbox.queued
    const acked = total - waiting
    const onDisk = await inboxOnDisk(b, bobId)
    // mid-stream = packets were still on their way when the receiver died (how many were sent by then does not matter)
    assert.ok(waiting > 0, `the kill must land mid-stream (sent ${total}, waiting ${waiting})`)
    assert.deepEqual(duplicates(onDisk.map((r) => r.id)), [], 'no duplicates on disk')
    assert.ok(onDisk.length >= acked, `every acked message is on the receiver's disk: ${onDisk.length} stored, ${acked} acked`)
    assert.deepEqual(onDisk.map((r) => r.seq), onDisk.map((_, i) => i + 1), 'gap-free seqs')
    assert.ok(perPairOrdered(onDisk.map((r) => r.text)), 'per-pair order on disk')
    const sentSoFar = new Set(sent.flat())
    assert.ok(onDisk.every((r) => sentSoFar.has(r.id)), 'only sent messages')

    gate.release()
    await b.start()
    await Promise.all(loops)
    const all = new Set(sent.flat())
    const rows = await waitFor(async () => { const r = await inboxRows(b, 'bob'); return r.length >= 2000 ? r : undefined }, 60_000, 'all 2,000 at the receiver')
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 20_000, 'the sender outbox to drain')
    const after = await inboxRows(b, 'bob')
    assert.equal(after.length, 2000, 'no duplicates arrive late')
    assert.deepEqual(duplicates(after.map((r) => r.id)), [])
    assert.deepEqual(new Set(after.map((r) => r.id)), all, 'exactly the messages sent')
    assert.deepEqual(after.slice(0, onDisk.length).map((r) => r.id), onDisk.map((r) => r.id), 'what was stored before the crash kept its seqs')
    assert.deepEqual(after.map((r) => r.seq), after.map((_, i) => i + 1))
    assert.ok(perPairOrdered(rows.map((r) => r.payload.text ?? '')), 'per-pair FIFO across the crash')
  })

  it('sender killed mid-stream: every message `send` returned for is delivered exactly once, nothing else appears', async () => {
    pair = await startPair({ senders: SENDERS })
    const { a, b } = pair
    // a backlog that streams while the sender keeps sending: the receiver is
    // away for the first 1,200 sends
    await b.stop()
    clients = await Promise.all(SENDERS.map(async () => await a.client()))
    const sent = SENDERS.map((): string[] => [])
    const attempted = SENDERS.map(() => -1)
    const loops = SENDERS.map(async (s, i) => {
      for (let k = 0; k < 5000; k++) {
        attempted[i] = k
        try { await sendSeq(clients[i], s, 'bob', [`${s} ${k}`], sent[i]) } catch { return }
      }
    })
    await waitFor(async () => sent.flat().length >= 1200 || undefined, 60_000, 'a backlog')
    await b.start()
    await waitFor(async () => ((await status(b)).nodes[0]?.inbox.last ?? 0) >= 300 || undefined, 60_000, 'the stream to get going')
    a.kill9()
    await Promise.all(loops)
    await waitGone(a.pid)
    const returned = sent.flat()
    const before = (await inboxRows(b, 'bob')).length
    assert.ok(before < returned.length, `the kill must land mid-stream (${before} delivered of ${returned.length})`)
    for (const c of clients) c.close()
    clients = []

    await a.start()
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 60_000, 'the restarted sender to drain its outbox')
    const rows = await inboxRows(b, 'bob')
    const ids = rows.map((r) => r.id)
    assert.deepEqual(duplicates(ids), [], 'no duplicates')
    const got = new Set(ids)
    const lost = returned.filter((id) => !got.has(id))
    assert.deepEqual(lost, [], 'every returned send is delivered')
    // a send cut off by the crash may or may not have become durable, but it is
    // then the one in flight (the next text of its sender) - nothing else
    const returnedSet = new Set(returned)
    const extra = rows.filter((r) => !returnedSet.has(r.id)).map((r) => r.payload.text)
    const inFlight = new Set(SENDERS.map((s, i) => `${s} ${attempted[i]}`))
    assert.ok(extra.every((t) => t !== undefined && inFlight.has(t)), `unexpected messages: ${JSON.stringify(extra)}`)
    assert.ok(extra.length <= SENDERS.length)
    assert.ok(perPairOrdered(rows.map((r) => r.payload.text ?? '')), 'per-pair FIFO across the crash')
    assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i + 1))
  })

  it('sender killed right after acks, its outbox removals lost (unsynced, as after a power cut): the restarted sender resends them and the receiver holds each packet exactly once', async () => {
    pair = await startPair()
    const { a, b } = pair
    // 30 packets durable in a's outbox while b is away
    await b.stop()
    clients = [await a.client()]
    const sent = await sendSeq(clients[0], 'alice', 'bob', Array.from({ length: 30 }, (_, k) => `alice ${k}`))
    clients[0].close()
    clients = []
    a.kill9()
    await waitGone(a.pid)
    // the queue entries as they were synced at send time (what a lost removal leaves behind)
    const snapshot = await outboxOnDisk(a.home)
    assert.equal(snapshot.filter(([k]) => k.startsWith('o!')).length, 30)
    await b.start()
    await a.start()
    await waitFor(async () => (await inboxRows(b, 'bob')).length >= 30 || undefined, 60_000, 'the backlog to arrive')
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 20_000, 'the acks to remove the backlog')
    // ten more, and kill -9 the sender the moment the receiver holds them (acks on the wire or just in)
    clients = [await a.client()]
    await sendSeq(clients[0], 'alice', 'bob', Array.from({ length: 10 }, (_, k) => `alice ${30 + k}`), sent)
    await waitFor(async () => (await inboxRows(b, 'bob')).length >= 40 || undefined, 20_000, 'the ten to arrive')
    a.kill9()
    clients[0].close()
    clients = []
    await waitGone(a.pid)
    await restoreOnDisk(a.home, snapshot)
    const queued = (await outboxOnDisk(a.home)).filter(([k]) => k.startsWith('o!')).length
    assert.ok(queued >= 30, `the 30 removals are undone on disk (${queued} queued)`)

    await a.start()
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 60_000, 'the restarted sender to resend and drain its outbox')
    const st = await status(a)
    assert.equal(st.outbox.dead, 0, 'every resend was acked (as a duplicate), none refused')
    const rows = await inboxRows(b, 'bob')
    assert.equal(rows.length, 40, 'no packet stored twice')
    assert.deepEqual(duplicates(rows.map((r) => r.id)), [])
    assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(sent), 'exactly the packets sent')
    assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i + 1))
    assert.deepEqual(rows.map((r) => r.payload.text), sent.map((_, k) => `alice ${k}`), 'in send order')
    assert.deepEqual(await inboxRows(a, 'alice'), [], 'no ERROR notice at the sender')
  })
})

/** The outbox queue and expiry index of a stopped host, straight from its LevelDB. */
async function outboxOnDisk (home: string): Promise<Array<[string, Uint8Array]>> {
  const db = await openDb(`${home}/store`)
  try {
    const out: Array<[string, Uint8Array]> = []
    for (const prefix of ['o!', 'e!']) {
      for await (const [k, v] of db.iterator({ gt: prefix, lt: prefix + '\xff' })) out.push([k, v])
    }
    return out
  } finally {
    await db.close()
  }
}

/** Put entries back into a stopped host's LevelDB (synced). */
async function restoreOnDisk (home: string, entries: Array<[string, Uint8Array]>): Promise<void> {
  const db = await openDb(`${home}/store`)
  try {
    await db.batch(entries.map(([key, value]) => ({ type: 'put' as const, key, value })), { sync: true } as object)
  } finally {
    await db.close()
  }
}
