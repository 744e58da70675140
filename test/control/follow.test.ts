// inbox.follow and inbox.read through a real daemon's control socket: pages
// read ahead while the previous one is written, live packets joining a
// replay, and the rendered JSON of the byte renderer (the same as renderEntry).
import { strict as assert } from 'node:assert'
import type { ControlClient } from '../../src/control/client.js'
import { renderFollowPage } from '../../src/control/follow-frames.js'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'

interface Row { seq: number, id: string, from: string, from_id: string, to: string, to_id: string, signal: string, payload: { text?: string }, scope: unknown, ts: number, received: number, session_id?: string }

/** 8 KB bodies: a follow page holds ~1 MiB, so 600 packets span several full pages */
const BODY = 'b'.repeat(8 * 1024)
const STORED = 600
const LIVE = 150

describe('control - inbox.follow and inbox.read', function () {
  this.timeout(120_000)
  let h: TestHost
  let c: ControlClient

  before(async () => {
    h = await startHost()
    c = await h.client()
    await c.call('node.add', { name: 'bob' })
    await c.call('node.add', { name: 'al', parent: 'bob' })
    for (let i = 1; i <= STORED; i++) await c.call('send', { as: 'al', to: 'bob', text: `${i} "é" ${BODY}`, session_id: `s${i}` })
  })
  after(async () => { c?.close(); await h?.cleanup() })

  it('replays several full pages from seq 0 while live packets arrive: every packet once, in order, then follows on', async () => {
    const f = await h.client()
    const got: Row[] = []
    const done = f.stream('inbox.follow', { node: 'bob', after: 0 }, (e) => { got.push(e as Row) }).catch(() => {})
    const sender = await h.client()
    for (let i = STORED + 1; i <= STORED + LIVE; i++) await sender.call('send', { as: 'al', to: 'bob', text: `${i} "é" ${BODY}`, session_id: `s${i}` })
    sender.close()
    await waitFor(async () => got.length >= STORED + LIVE || undefined, 60_000, 'the replay and the live packets')
    await c.call('send', { as: 'al', to: 'bob', text: 'after the replay' })
    await waitFor(async () => got.length >= STORED + LIVE + 1 || undefined, 20_000, 'the packet after the replay')
    f.close()
    await done
    assert.deepEqual(got.map((r) => r.seq), Array.from({ length: STORED + LIVE + 1 }, (_, i) => i + 1), 'every seq once, in order')
    assert.deepEqual(got.slice(0, -1).map((r) => r.payload.text), Array.from({ length: STORED + LIVE }, (_, i) => `${i + 1} "é" ${BODY}`))
    assert.deepEqual(got.slice(0, -1).map((r) => r.session_id), Array.from({ length: STORED + LIVE }, (_, i) => `s${i + 1}`))
    assert.equal(got[got.length - 1].payload.text, 'after the replay')
    assert.ok(got.every((r) => r.from === 'al' && r.to === 'bob' && r.signal === 'MESSAGE'), 'names rendered')
  })

  it('binary framing (what amesh inbox --follow uses) gives the same entries as the NDJSON stream, from seq 0 and from a cursor, live ones too', async () => {
    const collect = async (framing: 'ndjson' | 'binary', after: number, want: number): Promise<Row[]> => {
      const f = await h.client()
      const got: Row[] = []
      const done = (framing === 'binary'
        ? f.frames('inbox.follow', { node: 'bob', after }, (body) => { got.push(...renderFollowPage(body) as Row[]) })
        : f.stream('inbox.follow', { node: 'bob', after }, (e) => { got.push(e as Row) })).catch(() => {})
      await waitFor(async () => got.length >= want || undefined, 60_000, `the ${framing} follow from ${after}`)
      f.close()
      await done
      return got
    }
    const total = (await c.call('status')).nodes.find((n) => n.name === 'bob')?.inbox
    const last = total !== undefined && !('error' in total) ? total.last : 0
    assert.ok(last >= STORED)
    for (const after of [0, 333]) {
      const ndjson = await collect('ndjson', after, last - after)
      const binary = await collect('binary', after, last - after)
      assert.equal(binary.length, last - after)
      assert.deepEqual(binary, ndjson, `the same rendered entries after ${after}`)
    }
    // a live packet reaches a binary follower too, as the JSON stream renders it
    const f = await h.client()
    const live: Row[] = []
    const done = f.frames('inbox.follow', { node: 'bob', after: last }, (body) => { live.push(...renderFollowPage(body) as Row[]) }).catch(() => {})
    await c.call('send', { as: 'al', to: 'bob', text: 'live, binary', session_id: 'sl' })
    await waitFor(async () => live.length >= 1 || undefined, 20_000, 'the live packet')
    f.close()
    await done
    const [read] = await c.call('inbox.read', { node: 'bob', after: last, limit: 1 })
    assert.deepEqual(live, [read])
    assert.equal(live[0].from, 'al')
    assert.equal(live[0].payload.text, 'live, binary')
  })

  it('a binary follower that reads slowly gets the same entries as the NDJSON stream (the daemon reuses frame buffers once written)', async () => {
    const total = (await c.call('status')).nodes.find((n) => n.name === 'bob')?.inbox
    const last = total !== undefined && !('error' in total) ? total.last : 0
    const rows = async (framing: 'ndjson' | 'binary'): Promise<Row[]> => {
      const f = await h.client()
      const got: Row[] = []
      // the binary reader blocks 40 ms per frame: the socket fills, the daemon's next frames wait for drains
      const pause = new Int32Array(new SharedArrayBuffer(4))
      const done = (framing === 'binary'
        ? f.frames('inbox.follow', { node: 'bob', after: 0 }, (body) => { Atomics.wait(pause, 0, 0, 40); got.push(...renderFollowPage(body) as Row[]) })
        : f.stream('inbox.follow', { node: 'bob', after: 0 }, (e) => { got.push(e as Row) })).catch(() => {})
      await waitFor(async () => got.length >= last || undefined, 60_000, `the ${framing} follow`)
      f.close()
      await done
      return got
    }
    const binary = await rows('binary')
    assert.equal(binary.length, last)
    assert.deepEqual(binary, await rows('ndjson'))
  })

  it('follow from a cursor and inbox.read pages give the same rendered entries as each other', async () => {
    const f = await h.client()
    const followed: Row[] = []
    const done = f.stream('inbox.follow', { node: 'bob', after: 100 }, (e) => { followed.push(e as Row) }).catch(() => {})
    await waitFor(async () => followed.length >= STORED - 100 || undefined, 60_000, 'the follow from seq 100')
    f.close()
    await done
    const read: Row[] = []
    for (let after = 100; read.length < STORED - 100;) {
      const page = await c.call('inbox.read', { node: 'bob', after, limit: 77 })
      assert.ok(page.length > 0)
      read.push(...page)
      after = page[page.length - 1].seq
    }
    assert.equal(followed[0].seq, 101)
    assert.deepEqual(followed.slice(0, STORED - 100), read.slice(0, STORED - 100))
  })

  it('inbox.read with binary framing (what amesh inbox uses) gives the same entries as the JSON reply: cursors, limits, the acked cursor, past the end, unknown nodes', async () => {
    const asJson = async (params: { node: string, after?: number, limit?: number }): Promise<Row[]> => await c.call('inbox.read', params) as Row[]
    const asFrame = async (params: { node: string, after?: number, limit?: number }): Promise<Row[]> => renderFollowPage(await c.callFrame('inbox.read', params)) as Row[]
    const cases = [{ node: 'bob' }, { node: 'bob', after: 0, limit: 10_000 }, { node: 'bob', after: 0, limit: 1 }, { node: 'bob', after: 299, limit: 77 }, { node: 'bob', after: STORED - 1, limit: 5 }, { node: 'bob', after: 1_000_000 }, { node: 'al', after: 0 }]
    for (const params of cases) {
      const json = await asJson(params)
      assert.deepEqual(await asFrame(params), json, JSON.stringify(params))
    }
    await c.call('ack', { node: 'bob', seq: 250 })
    const fromCursor = await asFrame({ node: 'bob', limit: 3 })
    assert.deepEqual(fromCursor.map((r) => r.seq), [251, 252, 253], 'after the acked cursor by default')
    assert.deepEqual(fromCursor, await asJson({ node: 'bob', limit: 3 }))
    // replies built while others still wait in their sockets (this process reads none for a while): each intact
    const clients = await Promise.all([0, 1, 2, 3].map(async () => await h.client()))
    try {
      const at = (k: number): { node: string, after: number, limit: number } => ({ node: 'bob', after: 40 * k, limit: 10_000 })
      const want = await Promise.all(clients.map(async (cl, k) => await asJson(at(k))))
      const pending = clients.map(async (cl, k) => await cl.callFrame('inbox.read', at(k)))
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300)
      const frames = await Promise.all(pending)
      frames.forEach((f, k) => assert.deepEqual(renderFollowPage(f), want[k], `concurrent reply ${k}`))
    } finally {
      for (const cl of clients) cl.close()
    }
    await assert.rejects(c.callFrame('inbox.read', { node: 'nobody' }), { code: 'UNKNOWN_NODE' })
    await assert.rejects(c.callFrame('inbox.read', { node: 'bob', limit: 10_001 }), { code: 'INVALID_ARGUMENT' })
  })
})
