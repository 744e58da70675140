// A receiver's full inbox across hosts (INBOX_FULL, docs/DELIVERY.md): the
// sender keeps the refused packets queued and resends them with backoff; they
// arrive once each, in order, as the inbox is acked. Both hosts' logs say what
// happens, once per run of refusals, not at every retry.
import { strict as assert } from 'node:assert'
import type { ControlClient } from '../../src/control/client.js'
import { readLog, waitFor } from '../utils/hosts.js'
import { call, inboxRows, sendSeq, startPair, status, type Pair } from './helpers.js'

const CAP = 5
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const retryLines = (log: string): number => log.split('\n').filter((l) => l.includes('asks to retry later (INBOX_FULL')).length

describe('delivery - a full inbox on the receiving host', function () {
  this.timeout(120_000)
  let pair: Pair | undefined
  let c: ControlClient | undefined

  afterEach(async () => {
    c?.close()
    await pair?.a.cleanup()
    await pair?.b.cleanup()
    pair = undefined
  })

  it(`inbox_per_node ${CAP}: 12 sends wait in the sender's outbox while the inbox is full, and arrive once each, in order, as it is acked`, async () => {
    pair = await startPair({ b: { inbox_per_node: CAP } })
    const { a, b } = pair
    c = await a.client()
    const texts = Array.from({ length: 12 }, (_, i) => `m${i}`)
    await sendSeq(c, 'alice', 'bob', texts)
    const bobLast = async (): Promise<number> => (await status(b)).nodes.find((n) => n.name === 'bob')?.inbox.last ?? 0
    const queued = async (): Promise<number> => (await status(a)).outbox.queued
    await waitFor(async () => (await bobLast()) === CAP && (await queued()) === 12 - CAP ? true : undefined, 30_000, 'the inbox full, the rest queued')

    // several backoff cycles while full: nothing more gets in, nothing is lost, one log line
    await sleep(2500)
    assert.equal(await bobLast(), CAP)
    assert.equal(await queued(), 12 - CAP)
    assert.equal(retryLines(readLog(a)), 1, readLog(a))
    assert.ok(!readLog(b).includes('INTERNAL: stream reset'), readLog(b))

    await call(b, 'ack', { node: 'bob', seq: CAP })
    await waitFor(async () => (await bobLast()) === 2 * CAP ? true : undefined, 30_000, 'five more after the ack')
    await call(b, 'ack', { node: 'bob', seq: 2 * CAP })
    await waitFor(async () => (await bobLast()) === 12 && (await queued()) === 0 ? true : undefined, 30_000, 'the rest after the second ack')

    const rows = await inboxRows(b, 'bob')
    assert.deepEqual(rows.map((r) => r.payload.text), texts)
    assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 12 }, (_, i) => i + 1))
    // a second run of refusals (full again after the first ack) is logged once more, at most
    assert.ok(retryLines(readLog(a)) <= 2, readLog(a))
  })
})
