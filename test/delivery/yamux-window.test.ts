// Lazy yamux window updates (src/delivery/yamux-window.ts) on real libp2p
// streams (two peers in this process: TCP on loopback, Noise, yamux): the
// packet streams' fields are where the rule reads them, a transfer far past
// the 256 KiB initial window arrives whole and in order with a window update
// only every half window or so, and T1's shape (one small packet, one small
// answer, over and over) sends no window update at all after the stream's
// ACK. A control stream of the same connection, left eager, shows what the
// library does without the rule (an update per frame read): the counts below
// fail if the rule stops applying.
import { strict as assert } from 'node:assert'
import { createHash } from 'node:crypto'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { StreamState, YamuxStream } from '@chainsafe/libp2p-yamux/stream'
import { tcp } from '@libp2p/tcp'
import type { Libp2p, Stream } from '@libp2p/interface'
import { createLibp2p } from 'libp2p'
import { pushable } from 'it-pushable'
import { lazyWindowUpdates, openPacketStream, windowUpdateDue } from '../../src/delivery/yamux-window.js'
import { ON_LIMITED, openStreamOn } from '../../src/util/streams.js'

const LAZY = '/amesh-test/lazy/1.0.0'
const EAGER = '/amesh-test/eager/1.0.0'
const LAZY_PING = '/amesh-test/lazy-ping/1.0.0'
const EAGER_PING = '/amesh-test/eager-ping/1.0.0'
/** the yamux spec's frame type of a window update (0 data, 1 window update, 2 ping, 3 go away) */
const WINDOW_UPDATE = 1
const INITIAL_WINDOW = 256 * 1024
const CHUNK = 16 * 1024
const BULK = 4 * 1024 * 1024

interface Sent { updates: number }
interface FrameSender { sendFrame: (header: { type: number }, data?: unknown) => void }

/** Count the window-update frames a stream sends (its `sendFrame` is an instance property). */
function countUpdates (stream: Stream): Sent {
  const sent = { updates: 0 }
  const s = stream as unknown as FrameSender
  const send = s.sendFrame
  s.sendFrame = (header, data) => { if (header.type === WINDOW_UPDATE) sent.updates++; send(header, data) }
  return sent
}

function chunkOf (i: number): Uint8Array {
  const out = new Uint8Array(CHUNK)
  for (let j = 0; j < CHUNK; j += 4) out[j] = (i + j) & 0xff
  return out
}

interface Served { sent: Sent, applied: boolean }

describe('delivery - lazy yamux window updates on real libp2p streams', function () {
  this.timeout(60_000)
  let a: Libp2p
  let b: Libp2p
  const served = new Map<string, Served[]>()

  /** b's side of a protocol: echoes a digest of all it read (bulk) or answers each chunk (ping-pong) */
  async function serve (protocol: string, stream: Stream): Promise<void> {
    const entry: Served = { applied: protocol === LAZY || protocol === LAZY_PING ? lazyWindowUpdates(stream) : false, sent: countUpdates(stream) }
    served.set(protocol, [...(served.get(protocol) ?? []), entry])
    const out = pushable<Uint8Array>()
    void stream.sink(out).catch(() => {})
    const hash = createHash('sha256')
    let bytes = 0
    for await (const chunk of stream.source) {
      const buf = chunk.subarray()
      hash.update(buf)
      bytes += buf.byteLength
      if (protocol === LAZY_PING || protocol === EAGER_PING) out.push(buf) // ping-pong: answer at once
    }
    out.push(new TextEncoder().encode(`${bytes} ${hash.digest('hex')}`))
    out.end()
  }

  before(async () => {
    const base = { transports: [tcp()], connectionEncrypters: [noise()], streamMuxers: [yamux()], connectionMonitor: { enabled: false } }
    b = await createLibp2p({ ...base, addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] } })
    a = await createLibp2p(base)
    for (const p of [LAZY, EAGER, LAZY_PING, EAGER_PING]) await b.handle(p, ({ stream }) => { void serve(p, stream).catch(() => {}) }, ON_LIMITED)
    await a.dial(b.getMultiaddrs()[0])
  })

  after(async () => { await Promise.all([a, b].filter((n) => n !== undefined).map(async (n) => await n.stop())) })

  async function open (protocol: string): Promise<Stream> {
    const opened = protocol === LAZY || protocol === LAZY_PING ? await openPacketStream(a, b.peerId, protocol) : await openStreamOn(a, b.peerId, protocol)
    return opened.stream
  }

  /** send `chunks`, end, and read b's answer */
  async function bulk (protocol: string, count: number): Promise<{ answer: string, expected: string }> {
    const stream = await open(protocol)
    const hash = createHash('sha256')
    const chunks = Array.from({ length: count }, (_, i) => chunkOf(i))
    for (const c of chunks) hash.update(c)
    const reading = (async () => { let s = ''; for await (const c of stream.source) s += new TextDecoder().decode(c.subarray()); return s })()
    await stream.sink(chunks)
    return { answer: await reading, expected: `${count * CHUNK} ${hash.digest('hex')}` }
  }

  it('the rule reads the fields of the yamux stream libp2p hands out, on both ends', async () => {
    const stream = await open(LAZY)
    assert.ok(stream instanceof YamuxStream, 'a packet stream is the muxer\'s own stream object')
    const fields = stream as unknown as { recvWindow: unknown, recvWindowCapacity: unknown, sendWindowUpdate: unknown }
    // protocol negotiation already read from it, and the library grows the window fast on loopback
    assert.ok(typeof fields.recvWindow === 'number' && fields.recvWindow >= INITIAL_WINDOW, String(fields.recvWindow))
    assert.ok(typeof fields.recvWindowCapacity === 'number' && fields.recvWindowCapacity <= fields.recvWindow, String(fields.recvWindowCapacity))
    assert.notEqual(fields.sendWindowUpdate, YamuxStream.prototype.sendWindowUpdate, 'openPacketStream made the opener\'s side lazy')
    await stream.close()
    const mine = served.get(LAZY)?.[0]
    assert.equal(mine?.applied, true, 'the handler\'s side of a real stream takes the rule')
  })

  it('due: flags still to send, or at most half the window left', () => {
    assert.equal(windowUpdateDue({ state: StreamState.SYNSent, recvWindow: 100, recvWindowCapacity: 100 }), true)
    assert.equal(windowUpdateDue({ state: StreamState.SYNReceived, recvWindow: 100, recvWindowCapacity: 100 }), true) // the ACK is owed
    assert.equal(windowUpdateDue({ state: StreamState.Established, recvWindow: 100, recvWindowCapacity: 51 }), false)
    assert.equal(windowUpdateDue({ state: StreamState.Established, recvWindow: 100, recvWindowCapacity: 50 }), true)
    assert.equal(windowUpdateDue({ state: StreamState.Established, recvWindow: 100, recvWindowCapacity: 0 }), true)
  })

  it('4 MiB (16 x the initial window) arrives whole, in order, with an update only every half window or so', async () => {
    const count = BULK / CHUNK
    const lazy = await bulk(LAZY, count)
    assert.equal(lazy.answer, lazy.expected, 'every byte, in order, once')
    const eager = await bulk(EAGER, count)
    assert.equal(eager.answer, eager.expected)
    const lazyUpdates = served.get(LAZY)?.at(-1)?.sent.updates ?? -1
    const eagerUpdates = served.get(EAGER)?.at(-1)?.sent.updates ?? -1
    // the sender cannot have sent 4 MiB on a 256 KiB window without updates; half-window updates need at most BULK / (INITIAL_WINDOW / 2)
    assert.ok(lazyUpdates >= 2 && lazyUpdates <= BULK / (INITIAL_WINDOW / 2) + 1, `lazy: ${lazyUpdates} updates`)
    assert.ok(eagerUpdates >= count / 2, `eager (the control): ${eagerUpdates} updates for ${count} frames`)
  })

  it('T1\'s shape: 200 small round trips (less than half the window in all), no window update after the ACK on the lazy stream', async () => {
    for (const protocol of [LAZY_PING, EAGER_PING]) {
      const stream = await open(protocol)
      const it = stream.source[Symbol.asyncIterator]()
      const out = pushable<Uint8Array>()
      void stream.sink(out).catch(() => {})
      for (let i = 0; i < 200; i++) {
        const msg = new TextEncoder().encode(`packet ${i} `.padEnd(600, '.')) // 200 x 600 B = 120,000 B < 128 KiB
        out.push(msg)
        const got = await it.next()
        assert.equal(new TextDecoder().decode(got.value?.subarray()), new TextDecoder().decode(msg), `round trip ${i} answered in order`)
      }
      out.end()
      for (;;) if ((await it.next()).done === true) break
    }
    const lazyUpdates = served.get(LAZY_PING)?.at(-1)?.sent.updates ?? -1
    const eagerUpdates = served.get(EAGER_PING)?.at(-1)?.sent.updates ?? -1
    assert.ok(lazyUpdates >= 0 && lazyUpdates <= 1, `lazy: ${lazyUpdates} updates (the ACK at most)`)
    assert.ok(eagerUpdates >= 150, `eager (the control): ${eagerUpdates} updates for 200 packets`)
  })
})
