// kill -9 of the receiver while 64 KiB packets stream in: their bytes live in
// the value log (src/store/value-log.ts), not in LevelDB, and every one of them
// still arrives exactly once, whole and in order, after the restart.
import { strict as assert } from 'node:assert'
import { readdirSync } from 'node:fs'
import type { ControlClient } from '../../src/control/client.js'
import { waitFor } from '../utils/hosts.js'
import { duplicates, inboxRows, perPairOrdered, sendSeq, startPair, status, waitGone, type Pair } from './helpers.js'

const COUNT = 400
const PAD = 'x'.repeat(64 * 1024)
const text = (k: number): string => `s0 ${k} ${PAD}`

describe('delivery - kill -9 mid-stream of packets stored in the value log', function () {
  this.timeout(150_000)
  let pair: Pair | undefined
  let client: ControlClient | undefined

  afterEach(async () => {
    client?.close()
    client = undefined
    await pair?.a.cleanup()
    await pair?.b.cleanup()
    pair = undefined
  })

  it('receiver killed while 400 × 64 KiB stream in: after its restart each arrives exactly once, byte for byte, in send order', async () => {
    pair = await startPair({ senders: ['s0'] })
    const { a, b } = pair
    client = await a.client()
    const sent: string[] = []
    let stop = false
    const loop = (async () => {
      for (let k = 0; k < COUNT; k++) {
        if (stop) await waitFor(async () => !stop || undefined, 60_000, 'the receiver to restart')
        await sendSeq(client as ControlClient, 's0', 'bob', [text(k)], sent)
      }
    })()
    await waitFor(async () => ((await status(b)).nodes[0]?.inbox.last ?? 0) >= 60 || undefined, 60_000, 'the stream to get going')
    b.kill9()
    await waitGone(b.pid)
    stop = true
    assert.ok(readdirSync(`${b.home}/store/values`).some((f) => f.endsWith('.vlog')), 'the packets went to the value log')
    await waitFor(async () => (await status(a)).outbox.queued > 0 || undefined, 20_000, 'packets waiting for the dead receiver')
    await b.start()
    stop = false
    await loop
    const rows = await waitFor(async () => { const r = await inboxRows(b, 'bob'); return r.length >= COUNT ? r : undefined }, 90_000, `all ${COUNT} at the receiver`)
    await waitFor(async () => (await status(a)).outbox.queued === 0 || undefined, 30_000, 'the sender outbox to drain')
    const after = await inboxRows(b, 'bob')
    assert.equal(after.length, COUNT, 'none twice, none late')
    assert.deepEqual(duplicates(after.map((r) => r.id)), [])
    assert.deepEqual(new Set(after.map((r) => r.id)), new Set(sent), 'exactly the messages sent')
    assert.deepEqual(after.map((r) => r.seq), after.map((_, i) => i + 1), 'gap-free seqs')
    assert.deepEqual(after.map((r) => r.payload.text), sent.map((_, k) => text(k)), 'every text whole, in send order')
    assert.ok(perPairOrdered(rows.map((r) => r.payload.text ?? '')))
  })
})
