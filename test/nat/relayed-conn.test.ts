// A real relayed connection on loopback (three libp2p peers in this process:
// a circuit relay v2 server with a small data limit, a host reserved on it,
// and one dialling that host through it): what the link's budget reads is
// libp2p's live count, a ping runs over that very connection without a new
// circuit, and a spent connection is passed over for a fresh one.
import { strict as assert } from 'node:assert'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import type { Connection, Libp2p } from '@libp2p/interface'
import { createLibp2p } from 'libp2p'
import { LinkBudget, pingOver } from '../../src/delivery/link-budget.js'
import { circuitLeft, connectionTo, ON_LIMITED } from '../../src/util/streams.js'

const DATA_LIMIT = 512 * 1024
const SINK = '/amesh-test/sink/1.0.0'

// eslint-disable-next-line @typescript-eslint/explicit-function-return-type
function base () {
  return { transports: [tcp(), circuitRelayTransport()], connectionEncrypters: [noise()], streamMuxers: [yamux()], connectionMonitor: { enabled: false } }
}

async function until<T> (what: string, check: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = check()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('nat - a real relayed connection on loopback', function () {
  this.timeout(60_000)
  const nodes: Libp2p[] = []
  let a: Libp2p
  let b: Libp2p
  let first: Connection

  before(async () => {
    const relay = await createLibp2p({ ...base(), addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] }, services: { identify: identify(), relay: circuitRelayServer({ reservations: { applyDefaultLimit: true, defaultDataLimit: BigInt(DATA_LIMIT) } }) } })
    nodes.push(relay)
    b = await createLibp2p({ ...base(), addresses: { listen: [`${relay.getMultiaddrs()[0].toString()}/p2p-circuit`] }, services: { identify: identify(), ping: ping() } })
    nodes.push(b)
    a = await createLibp2p({ ...base(), services: { identify: identify(), ping: ping() } })
    nodes.push(a)
    await b.handle(SINK, ({ stream }) => { void (async () => { for await (const _ of stream.source) { /* drain */ } })().catch(() => {}) }, ON_LIMITED)
    const circuit = await until('a relayed address of b', () => b.getMultiaddrs().find((m) => m.toString().includes('/p2p-circuit')))
    first = await a.dial(circuit)
  })

  after(async () => { await Promise.all(nodes.map(async (n) => await n.stop())) })

  it('relayed link - the budget reads libp2p\'s live count of what the circuit carried', async () => {
    assert.notEqual(first.limits, undefined)
    const before = circuitLeft(first)?.bytes ?? 0
    assert.ok(before > DATA_LIMIT - 64 * 1024 && before <= DATA_LIMIT, String(before))
    const budget = LinkBudget.of(first) as LinkBudget
    assert.ok(budget.frameBytes < DATA_LIMIT / 4)
    const stream = await first.newStream(SINK, ON_LIMITED)
    await stream.sink([new Uint8Array(100 * 1024)])
    const left = await until('the count to fall', () => { const n = circuitLeft(first)?.bytes ?? before; return n <= before - 100 * 1024 ? n : undefined })
    assert.ok(budget.bytesLeft() <= left, `${budget.bytesLeft()} vs ${left}`)
  })

  it('relayed link - a ping runs over the link\'s own connection, not a new circuit', async () => {
    const count = a.getConnections(b.peerId).length
    for (let i = 0; i < 3; i++) await pingOver(first, AbortSignal.timeout(5000))
    assert.equal(a.getConnections(b.peerId).length, count)
    assert.equal(first.status, 'open')
  })

  it('relayed link - once the connection is spent, new streams go over a fresh circuit', async () => {
    assert.equal(await connectionTo(a, b.peerId), first)
    // past SPENT_BYTES left: fill the circuit up to just below it
    const stream = await first.newStream(SINK, ON_LIMITED)
    const fill = Math.max(0, (circuitLeft(first)?.bytes ?? 0) - 16 * 1024)
    await stream.sink([new Uint8Array(fill)])
    await until('the circuit to be nearly spent', () => (circuitLeft(first)?.bytes ?? DATA_LIMIT) < 32 * 1024 ? true : undefined)
    const next = await connectionTo(a, b.peerId, { signal: AbortSignal.timeout(10_000) })
    assert.notEqual(next.id, first.id)
    assert.notEqual(next.limits, undefined)
    assert.ok((circuitLeft(next)?.bytes ?? 0) > DATA_LIMIT / 2)
  })
})
