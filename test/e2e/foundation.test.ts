import { strict as assert } from 'node:assert'
import { jsonLines, meetNodes, startHost, waitFor, type TestHost } from '../utils/hosts.js'

interface Row { seq: number, id: string, from: string, from_id: string, to: string, to_id: string, signal: string, payload: { text?: string }, ts: number }

async function inbox (h: TestHost, node: string, after = 0): Promise<Row[]> {
  return jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', String(after), '--limit', '10000']))
}

async function sendLines (h: TestHost, as: string, to: string, lines: string[]): Promise<Array<{ id: string, state: string }>> {
  const out = await h.ok(['send', '--as', as, to, '-'], { input: lines.join('\n') + '\n' })
  return jsonLines(out)
}

describe('e2e foundation - two hosts on loopback', function () {
  this.timeout(120_000)
  let h1: TestHost
  let h2: TestHost

  before(async () => {
    h1 = await startHost()
    h2 = await startHost({ peers: [h1.addr] })
    await meetNodes(h1, 'alice', h2, 'bob')
    // alice and bob are not in one group: each lets the other write to it
    await h2.ok(['grant', '--as', 'bob', '--to', 'alice'])
    await h1.ok(['grant', '--as', 'alice', '--to', 'bob'])
  })

  after(async () => {
    await h1?.cleanup()
    await h2?.cleanup()
  })

  it('delivers 200 messages each way exactly once, in send order, with correct fields', async () => {
    const ab = Array.from({ length: 200 }, (_, i) => `a-to-b ${i}`)
    const ba = Array.from({ length: 200 }, (_, i) => `b-to-a ${i}`)
    const [sentAB] = await Promise.all([sendLines(h1, 'alice', 'bob', ab), sendLines(h2, 'bob', 'alice', ba)])
    assert.equal(sentAB.length, 200)
    assert.ok(sentAB.every((r) => r.state === 'queued'))
    const atBob = await waitFor(async () => { const r = await inbox(h2, 'bob'); return r.length >= 200 ? r : undefined }, 30_000, 'bob inbox')
    const atAlice = await waitFor(async () => { const r = await inbox(h1, 'alice'); return r.length >= 200 ? r : undefined }, 30_000, 'alice inbox')
    assert.deepEqual(atBob.map((r) => r.payload.text), ab)
    assert.deepEqual(atAlice.map((r) => r.payload.text), ba)
    assert.deepEqual(atBob.map((r) => r.id), sentAB.map((r) => r.id))
    assert.deepEqual(atBob.map((r) => r.seq), Array.from({ length: 200 }, (_, i) => i + 1))
    const first = atBob[0]
    assert.equal(first.from, 'alice')
    assert.equal(first.to, 'bob')
    assert.equal(first.signal, 'MESSAGE')
    assert.match(first.from_id, /^did:key:z6Mk/)
    assert.match(first.to_id, /^did:key:z6Mk/)
    assert.equal(typeof first.ts, 'number')
    await new Promise((r) => setTimeout(r, 500))
    assert.equal((await inbox(h2, 'bob')).length, 200, 'no duplicates arrive later')
  })

  it('ack moves the durable cursor, and the cursor survives a daemon restart', async () => {
    await h2.ok(['ack', 'bob', '150'])
    const unacked = jsonLines<Row>(await h2.ok(['inbox', 'bob', '--json', '--limit', '10000']))
    assert.deepEqual(unacked.map((r) => r.seq), Array.from({ length: 50 }, (_, i) => i + 151))
    const before = h2.peerId
    await h2.stop()
    await h2.start()
    assert.equal(h2.peerId, before, 'same peer id after restart')
    const again = jsonLines<Row>(await h2.ok(['inbox', 'bob', '--json', '--limit', '10000']))
    assert.deepEqual(again.map((r) => r.seq), Array.from({ length: 50 }, (_, i) => i + 151))
    const status = JSON.parse(await h2.ok(['status', '--json'])) as { nodes: Array<{ name: string, inbox: { cursor: number, last: number } }> }
    const bob = status.nodes.find((n) => n.name === 'bob')
    assert.deepEqual(bob?.inbox, { last: 200, cursor: 150, unacked: 50 })
  })

  it('keeps undelivered outbox entries across a sender restart and delivers them when the peer is back', async () => {
    await h2.stop()
    const sent = await sendLines(h1, 'alice', 'bob', ['while down 1', 'while down 2', 'while down 3'])
    assert.ok(sent.every((r) => r.state === 'queued'))
    const st = JSON.parse(await h1.ok(['status', '--json'])) as { outbox: { queued: number } }
    assert.equal(st.outbox.queued, 3)
    await h1.stop()
    await h1.start()
    const st2 = JSON.parse(await h1.ok(['status', '--json'])) as { outbox: { queued: number } }
    assert.equal(st2.outbox.queued, 3, 'outbox intact after restart')
    await h2.start()
    const rows = await waitFor(async () => { const r = await inbox(h2, 'bob', 200); return r.length >= 3 ? r : undefined }, 40_000, 'queued messages to arrive')
    assert.deepEqual(rows.map((r) => r.payload.text), ['while down 1', 'while down 2', 'while down 3'])
    assert.deepEqual(rows.map((r) => r.id), sent.map((r) => r.id))
    await waitFor(async () => (JSON.parse(await h1.ok(['status', '--json'])) as { outbox: { queued: number } }).outbox.queued === 0, 10_000, 'outbox to drain')
  })

  it('a second `amesh up` on the same home fails clearly; `down` releases the lock', async () => {
    const second = await h1.run(['up', '--no-mdns'])
    assert.notEqual(second.code, 0)
    assert.match(second.stderr, /already running for home/)
    await h1.stop()
    // read-only commands never start a daemon (issue 19); a state-changing one does, on this initialised home
    const idle = await h1.run(['status', '--json'])
    assert.equal(idle.code, 3, 'status on a stopped home says so and exits 3')
    assert.equal((await h1.run(['node', 'add', 'after-restart'])).code, 0, 'node add auto-starts a daemon again once the lock is released')
    const r = await h1.run(['status', '--json'])
    assert.equal(r.code, 0)
    h1.pid = (JSON.parse(r.stdout) as { pid: number }).pid
  })

  it('unknown target names fail with a clear error', async () => {
    const r = await h1.run(['send', '--as', 'alice', 'nobody-here', 'hi'])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /unknown node: nobody-here/)
  })
})
