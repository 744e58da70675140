// A stalled consumer: the daemon reads the store at the consumer's pace and
// never buffers the backlog in memory; the consumer gets everything, in order.
import { strict as assert } from 'node:assert'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { call, perPairOrdered, status } from './helpers.js'

interface Event { seq: number, payload: { text?: string } }

/** A raw control-socket follower whose reading the test can pause. */
class Follower {
  readonly events: Event[] = []
  private buf = ''
  readonly socket: Socket

  constructor (path: string, params: object) {
    this.socket = connect(path)
    this.socket.setEncoding('utf8')
    this.socket.on('data', (chunk: string) => {
      this.buf += chunk
      let i
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = JSON.parse(this.buf.slice(0, i)) as { event?: Event }
        this.buf = this.buf.slice(i + 1)
        if (line.event !== undefined) this.events.push(line.event)
        if (this.events.length === 10 && this.pauseAt10) this.socket.pause()
      }
    })
    this.socket.write(JSON.stringify({ id: 1, method: 'inbox.follow', params }) + '\n')
  }

  pauseAt10 = false
  close (): void { this.socket.destroy() }
}

const SENDERS = ['s0', 's1', 's2', 's3']
const TOTAL = 20_000
/** 20,000 x 8 KB = 160 MB: far more than the generous RSS bound below */
const BODY = 'x'.repeat(8 * 1024)

describe('delivery - slow consumer', function () {
  this.timeout(150_000)
  let h: TestHost

  before(async () => {
    h = await startHost()
    await call(h, 'node.add', { name: 'bob' })
    for (const s of SENDERS) await call(h, 'node.add', { name: s, parent: 'bob' })
  })
  after(async () => { await h?.cleanup() })

  it('reads 10, stops acking and reading while 20,000 (160 MB) arrive: daemon RSS stays bounded; resumed, it gets all in order; a new attach starts after the acked cursor', async () => {
    const sock = join(h.home, 'amesh.sock')
    const f = new Follower(sock, { node: 'bob' })
    f.pauseAt10 = true
    const warm = SENDERS.map(async (s) => { for (let k = 0; k < 3; k++) await call(h, 'send', { as: s, to: 'bob', text: `${s} ${k - 3}` }) })
    await Promise.all(warm)
    await waitFor(async () => f.events.length >= 10 || undefined, 20_000, 'the first 10')
    await call(h, 'ack', { node: 'bob', seq: 10 })
    const base = (await status(h)).rss_bytes
    let peak = base
    let sending = true
    const sampler = (async () => {
      while (sending) {
        peak = Math.max(peak, (await status(h)).rss_bytes)
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    })()
    const clients = await Promise.all(SENDERS.map(async () => await h.client()))
    await Promise.all(SENDERS.map(async (s, i) => {
      for (let k = 0; k < TOTAL / SENDERS.length; k++) await clients[i].call('send', { as: s, to: 'bob', text: `${s} ${k} ${BODY}` })
    }))
    for (const c of clients) c.close()
    sending = false
    await sampler
    peak = Math.max(peak, (await status(h)).rss_bytes)
    const growth = peak - base
    const st = (await status(h)).nodes.find((n) => n.name === 'bob')
    assert.deepEqual(st?.inbox, { last: TOTAL + 12, cursor: 10, unacked: TOTAL + 2 })
    assert.ok(f.events.length < 1000, `the stalled follower holds only what fits in socket buffers (${f.events.length})`)
    // the sends alone grow the heap by ~70 MB on this stack; buffering the
    // backlog for the consumer would add 160 MB or more on top
    assert.ok(growth < 130 * 1024 * 1024, `daemon RSS grew by ${Math.round(growth / 1048576)} MB while 160 MB queued for a stalled consumer`)

    f.socket.resume()
    await waitFor(async () => f.events.length >= TOTAL + 12 || undefined, 60_000, 'the resumed consumer to catch up')
    f.close()
    assert.deepEqual(f.events.map((e) => e.seq), Array.from({ length: TOTAL + 12 }, (_, i) => i + 1), 'every seq once, in order')
    assert.ok(perPairOrdered(f.events.map((e) => e.payload.text ?? '')))

    const again = new Follower(sock, { node: 'bob' })
    await waitFor(async () => again.events.length >= 5 || undefined, 10_000, 're-attach')
    again.close()
    assert.deepEqual(again.events.slice(0, 5).map((e) => e.seq), [11, 12, 13, 14, 15], 'unacked packets are redelivered from the cursor')
  })
})
