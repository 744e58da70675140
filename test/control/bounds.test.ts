// The control socket against a client that does not read: bounded in bytes,
// not only in requests. And method lookup by own name only.
import { strict as assert } from 'node:assert'
import { readFileSync } from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { z } from 'zod'
import type { ControlClient } from '../../src/control/client.js'
import { ControlServer, EncodedArray, method, PagedArray } from '../../src/control/server.js'
import { encodeRequestFrame } from '../../src/control/request-frame.js'
import { CONTROL_LIMITS, Connection } from '../../src/control/connection.js'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'

const MiB = 1024 * 1024
/** 48 packets of 64 KiB: an inbox.read of them all renders ~3 MiB of JSON */
const BODY = 'x'.repeat(64 * 1024)
const STORED = 48
const READS = 300

/** The daemon's resident set, bytes (VmRSS of /proc/<pid>/status). */
function rss (pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (m === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(m[1]) * 1024
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** Open a raw connection to the control socket that never reads what it gets. */
async function deafClient (sock: string): Promise<Socket> {
  const s = connect(sock)
  await new Promise<void>((resolve, reject) => { s.once('connect', resolve); s.once('error', reject) })
  s.pause()
  s.on('error', () => {})
  return s
}

describe('control - bounds', function () {
  this.timeout(180_000)
  let h: TestHost
  let c: ControlClient

  before(async () => {
    h = await startHost()
    c = await h.client()
    await c.call('node.add', { name: 'bob' })
    await c.call('node.add', { name: 'al', parent: 'bob' })
    for (let i = 1; i <= STORED; i++) await c.call('send', { as: 'al', to: 'bob', text: `${i} ${BODY}` })
  })
  after(async () => { c?.close(); await h?.cleanup() })

  it('a client pipelining 300 inbox.read without reading keeps the daemon under baseline + 64 MiB, and it returns near baseline once the client leaves', async () => {
    // warm up the read path once, then take the baseline
    const all = await c.call('inbox.read', { node: 'bob', after: 0 })
    assert.equal(all.length, STORED)
    await sleep(500)
    const baseline = rss(h.pid)

    const s = await deafClient(join(h.home, 'amesh.sock'))
    const lines = Array.from({ length: READS }, (_, i) => JSON.stringify({ id: i + 1, method: 'inbox.read', params: { node: 'bob', after: 0 } }) + '\n')
    s.write(lines.join(''))
    // the daemon is stuck writing to a client that does not read; sample it meanwhile
    let peak = 0
    for (let i = 0; i < 30; i++) {
      peak = Math.max(peak, rss(h.pid))
      await sleep(100)
    }
    // the daemon still serves other clients
    assert.equal((await c.call('inbox.read', { node: 'bob', after: STORED - 1 })).length, 1)
    peak = Math.max(peak, rss(h.pid))
    assert.ok(peak < baseline + 64 * MiB, `peak RSS ${peak} vs baseline ${baseline}: ${((peak - baseline) / MiB).toFixed(1)} MiB above`)

    s.destroy()
    const settled = await waitFor(async () => {
      // some work on another connection, so the daemon collects garbage as it normally would
      await c.call('status')
      const now = rss(h.pid)
      return now <= baseline + 10 * MiB ? now : undefined
    }, 60_000, 'the daemon RSS to return near its baseline', 500)
    assert.ok(settled <= baseline + 10 * MiB)
    // and it keeps answering, also a fresh connection
    const again = await h.client()
    assert.equal((await again.call('inbox.read', { node: 'bob', after: 0 })).length, STORED)
    again.close()
  })

  it('prototype names are no methods: each answers UNKNOWN_METHOD and the connection keeps serving', async () => {
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__']
    for (const name of names) {
      await assert.rejects(c.request(name, {}), { code: 'UNKNOWN_METHOD', message: `unknown method: ${name}` }, name)
    }
    assert.equal((await c.call('nodes')).filter((n) => n.local).length, 2)
  })
})

describe('control - a client that stops reading', function () {
  this.timeout(60_000)
  let dir: string
  let server: ControlServer
  let sock: string
  const logged: string[] = []
  let produced = 0

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctl-'))
    sock = join(dir, 's.sock')
    const page = 'p'.repeat(256 * 1024)
    server = new ControlServer(sock, {
      // 64 pages of 256 KiB, each produced only when the previous one drained
      pages: method({
        params: z.object({}).strict(),
        call: async () => new PagedArray(async function * () {
          for (let i = 0; i < 64; i++) { produced++; yield new EncodedArray(1, (_k, out) => { out.json(page) }) }
        })
      }),
      ping: method({ params: z.object({}).strict(), call: async () => 'pong' }),
      flood: method({
        params: z.object({}).strict(),
        stream: async (_p, sink) => { for (let i = 0; i < 64; i++) await sink.emit({ i, page }) }
      })
    }, (line) => { logged.push(line) }, { stallMs: 300, outputBytes: 1024 * 1024 })
    await server.start()
  })
  after(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('is paused (its later requests wait, pages are not produced ahead) and then dropped with a log line', async () => {
    const s = await deafClient(sock)
    s.write(Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: i + 1, method: 'pages', params: {} }) + '\n').join(''))
    // (a paused client socket does not see its end: the daemon's log says it was dropped)
    await waitFor(async () => logged.some((l) => l.startsWith('control: client dropped: no read for 300 ms')) ? true : undefined, 30_000, 'the drop log line')
    s.destroy()
    // only what fits the socket buffers was produced: not 50 replies of 64 pages
    assert.ok(produced < 64, `${produced} pages produced`)
  })

  it('a client that reads gets every page of every reply, in order', async () => {
    const s = connect(sock)
    s.setEncoding('utf8')
    let text = ''
    s.on('data', (d: string) => { text += d })
    s.write(Array.from({ length: 3 }, (_, i) => JSON.stringify({ id: i + 1, method: 'pages', params: {} }) + '\n').join('') + JSON.stringify({ id: 4, method: 'ping' }) + '\n')
    await waitFor(async () => text.split('\n').length > 4 ? true : undefined, 30_000, 'four replies')
    s.destroy()
    const replies = text.trim().split('\n').map((l) => JSON.parse(l) as { id: number, result: unknown })
    assert.deepEqual(replies.map((r) => r.id).sort(), [1, 2, 3, 4])
    for (const r of replies.filter((x) => x.id !== 4)) {
      assert.equal((r.result as string[]).length, 64)
      assert.ok((r.result as string[]).every((p) => p.length === 256 * 1024))
    }
    assert.equal(replies.find((r) => r.id === 4)?.result, 'pong')
  })

  it('a stream whose consumer pauses past the stall bound is not dropped: resumed, it gets every event, then the end', async () => {
    const before = logged.length
    const s = connect(sock)
    s.setEncoding('utf8')
    let text = ''
    s.on('data', (d: string) => { text += d })
    await new Promise<void>((resolve) => s.once('connect', () => resolve()))
    s.pause()
    s.write(JSON.stringify({ id: 7, method: 'flood', params: {} }) + '\n')
    await sleep(1500) // five times the stall bound
    s.resume()
    await waitFor(async () => text.includes('"end":true') ? true : undefined, 30_000, 'the end of the stream')
    s.destroy()
    const events = text.trim().split('\n').map((l) => JSON.parse(l) as { id: number, event?: { i: number } })
    assert.deepEqual(events.filter((e) => e.event !== undefined).map((e) => e.event?.i), Array.from({ length: 64 }, (_, i) => i))
    assert.deepEqual(logged.slice(before), [])
  })
})

describe('control - requests in progress are bounded in bytes', function () {
  this.timeout(60_000)
  const BOUND = 1024 * 1024
  const TEXT = 256 * 1024
  let dir: string
  let server: ControlServer
  let sock: string
  /** the requests running now, by id, each with its gate */
  const running = new Map<number, () => void>()
  let mostRunning = 0
  const started: number[] = []
  const HOLD = z.object({ n: z.number(), text: z.string() }).strict()
  /** what a request's text was, as the handler read it: its length and the characters it is made of */
  const hold = async (p: z.infer<typeof HOLD>): Promise<{ n: number, length: number, chars: string }> => {
    started.push(p.n)
    await new Promise<void>((resolve) => { running.set(p.n, resolve) })
    running.delete(p.n)
    return { n: p.n, length: p.text.length, chars: [...new Set(p.text)].join('') }
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctl-'))
    sock = join(dir, 's.sock')
    server = new ControlServer(sock, {
      // runs until the test opens its gate: what is in progress stays in progress
      hold: method({ params: HOLD, call: hold }),
      // binary request frames carry send and send.batch only: the same handler under that name
      send: method({ params: HOLD, call: hold })
    }, () => {}, { inputBytes: BOUND })
    await server.start()
  })
  after(async () => {
    for (const open of running.values()) open()
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** A client that writes `lines` (JSON lines or binary frames) at once and collects the reply lines. */
  function client (lines: Array<string | Buffer>): { replies: () => Array<{ id: number, result: { n: number, length: number, chars: string } }>, close: () => void } {
    const s = connect(sock)
    s.setEncoding('utf8')
    let text = ''
    s.on('data', (d: string) => { text += d })
    s.write(Buffer.concat(lines.map((l) => typeof l === 'string' ? Buffer.from(l) : l)))
    return { replies: () => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)), close: () => s.destroy() }
  }

  const line = (n: number, size: number): string => JSON.stringify({ id: n, method: 'hold', params: { n, text: 'x'.repeat(size) } }) + '\n'

  /** Open the gates one by one, as they start, until `count` replies came; the most that ran at once. */
  async function drain (c: ReturnType<typeof client>, count: number): Promise<void> {
    await waitFor(async () => {
      mostRunning = Math.max(mostRunning, running.size)
      const first = [...running.keys()].sort((a, b) => a - b)[0]
      if (first !== undefined) running.get(first)?.()
      return c.replies().length === count ? true : undefined
    }, 30_000, `${count} replies`, 20)
  }

  it('40 requests of 256 KiB written at once: at most 4 (1 MiB) run at a time, and each is answered once, in order', async () => {
    started.length = 0
    mostRunning = 0
    const c = client(Array.from({ length: 40 }, (_, i) => line(i + 1, TEXT)))
    try {
      await waitFor(async () => running.size === 4 ? true : undefined, 10_000, 'four running')
      // the rest wait unread or unstarted while the four hold the bound
      await sleep(300)
      assert.equal(running.size, 4)
      assert.deepEqual(started, [1, 2, 3, 4])
      await drain(c, 40)
      const replies = c.replies()
      assert.deepEqual(replies.map((r) => r.id), Array.from({ length: 40 }, (_, i) => i + 1))
      assert.ok(replies.every((r) => r.result.length === TEXT && r.result.n === r.id))
      assert.deepEqual(started, Array.from({ length: 40 }, (_, i) => i + 1))
      assert.ok(mostRunning <= 4, `${mostRunning} ran at once`)
    } finally {
      c.close()
    }
  })

  it('a request larger than the bound runs alone, and small ones after it run as before', async () => {
    started.length = 0
    mostRunning = 0
    const c = client([line(1, 3 * BOUND), ...Array.from({ length: 6 }, (_, i) => line(i + 2, 10))])
    try {
      await waitFor(async () => running.size > 0 ? true : undefined, 10_000, 'the large one running')
      await sleep(300)
      assert.deepEqual(started, [1])
      await drain(c, 7)
      const replies = c.replies()
      assert.deepEqual(replies.map((r) => [r.id, r.result.length]), [[1, 3 * BOUND], ...Array.from({ length: 6 }, (_, i) => [i + 2, 10])])
    } finally {
      c.close()
    }
  })

  it('binary frames of 100 KiB, each read in several chunks, 20 written at once: those that wait keep their own bytes (the reader reuses its buffer)', async () => {
    started.length = 0
    mostRunning = 0
    // each frame's text is one character of its own, so a frame read from bytes another one overwrote shows
    const chars = 'abcdefghijklmnopqrst'
    const frames = Array.from({ length: 20 }, (_, i) => encodeRequestFrame(i + 1, 'send', { n: i + 1, text: chars[i].repeat(100 * 1024) }) as Buffer)
    const c = client(frames)
    try {
      await drain(c, 20)
      const replies = c.replies()
      assert.deepEqual(replies.map((r) => [r.id, r.result.length, r.result.chars]), Array.from({ length: 20 }, (_, i) => [i + 1, 100 * 1024, chars[i]]))
      assert.ok(mostRunning > 1 && mostRunning <= 11, `${mostRunning} ran at once`)
    } finally {
      c.close()
    }
  })

  it('a frame in the reader\'s reused buffer that must wait is copied: it starts with its own bytes', async () => {
    const path = join(dir, 'c.sock')
    const srv = createServer()
    const accepted = new Promise<Socket>((resolve) => srv.once('connection', resolve))
    await new Promise<void>((resolve) => srv.listen(path, resolve))
    const peer = connect(path)
    const socket = await accepted
    try {
      const seen: string[] = []
      let open = (): void => {}
      const conn = new Connection(socket, { ...CONTROL_LIMITS, inputBytes: 10 }, () => {}, async (req) => {
        seen.push(typeof req === 'string' ? req : req.body.toString())
        if (seen.length === 1) await new Promise<void>((resolve) => { open = resolve })
      })
      conn.request({ id: 1, body: Buffer.from('0123456789ab') }) // 12 bytes: the bound is held, the next waits
      const scratch = Buffer.from('second')
      conn.request({ id: 2, body: scratch }, true)
      scratch.write('XXXXXX') // the reader's next frame lands in the same buffer
      assert.deepEqual(seen, ['0123456789ab'])
      open()
      await waitFor(async () => seen.length === 2 ? true : undefined, 5000, 'the second request')
      assert.deepEqual(seen, ['0123456789ab', 'second'])
    } finally {
      peer.destroy()
      socket.destroy()
      await new Promise<void>((resolve) => srv.close(() => resolve()))
    }
  })
})
