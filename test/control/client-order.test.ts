// ControlClient's requests against a scripted server: they leave in call
// order, also while the framing question (asked before the first send) is
// unanswered and in the turns right after its answer; once it is answered a
// request is handed to the socket in the caller's turn, before any
// synchronous work the caller does next (a pager asks for its next page,
// then renders the one it holds: the daemon reads on meanwhile).
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ControlClient } from '../../src/control/client.js'
import { FRAMING_METHOD } from '../../src/control/request-frame.js'

interface Req { id: number, method: string, params: { n?: number } }

/** A server reading JSON-line requests; it answers each at once, the framing question when `answerFraming` is called. */
class Scripted {
  readonly got: Req[] = []
  private framing?: () => void
  private framingAsked!: () => void
  readonly asked = new Promise<void>((resolve) => { this.framingAsked = resolve })
  readonly server: Server

  constructor () {
    this.server = createServer((s: Socket) => {
      let buf = ''
      s.setEncoding('utf8')
      s.on('data', (d: string) => {
        buf += d
        let nl: number
        while ((nl = buf.indexOf('\n')) >= 0) {
          const r = JSON.parse(buf.slice(0, nl)) as Req
          buf = buf.slice(nl + 1)
          this.got.push(r)
          if (r.method === FRAMING_METHOD) {
            // JSON lines only: every request stays a line this server reads
            this.framing = () => s.write(JSON.stringify({ id: r.id, result: { requests: ['ndjson'] } }) + '\n')
            this.framingAsked()
          } else s.write(JSON.stringify({ id: r.id, result: { n: r.params.n } }) + '\n')
        }
      })
    })
  }

  answerFraming (): void { this.framing?.() }
}

describe('control - the client writes requests in call order, each in its caller\'s turn', function () {
  this.timeout(20_000)
  let dir: string
  let s: Scripted
  let c: ControlClient

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'amesh-client-order-'))
    s = new Scripted()
    await new Promise<void>((resolve) => s.server.listen(join(dir, 'sock'), resolve))
    c = await ControlClient.connect(join(dir, 'sock'))
  })
  afterEach(async () => {
    c.close()
    await new Promise<void>((resolve) => s.server.close(() => resolve()))
    rmSync(dir, { recursive: true, force: true })
  })

  it('requests made before, while and right after the framing answer arrives leave in call order', async () => {
    const replies: Array<Promise<unknown>> = []
    let n = 0
    const call = (method: string): void => { const k = ++n; replies.push(c.request(method, { n: k })) }
    call('send') // asks the framing question first
    call('status')
    await s.asked
    call('send')
    // requests made in the microtasks right after the answer is read (while the waiting ones are still being written)
    // (the client reads its socket through `onread`, not 'data' events: hooked where it reads a reply line)
    const client = c as unknown as { onLine: (line: string) => void }
    const onLine = client.onLine.bind(c)
    let made!: () => void
    const allMade = new Promise<void>((resolve) => { made = resolve })
    let first = true
    client.onLine = (line: string): void => {
      onLine(line)
      if (!first) return
      first = false
      let left = 8
      const again = (): void => { call('status'); if (--left > 0) queueMicrotask(again); else made() }
      queueMicrotask(again)
    }
    s.answerFraming()
    await allMade
    assert.equal(replies.length, 11)
    const results = await Promise.all(replies)
    assert.deepEqual(results, replies.map((_, i) => ({ n: i + 1 })))
    assert.equal(s.got[0].method, FRAMING_METHOD)
    assert.deepEqual(s.got.slice(1).map((r) => r.params.n), replies.map((_, i) => i + 1), 'the server read them in call order')
    call('status')
    assert.deepEqual(await replies[replies.length - 1], { n })
  })

  it('once the framing answer is in, a request reaches the socket before the caller\'s next synchronous work', async () => {
    const socket = (c as unknown as { socket: Socket }).socket
    const first = c.request('send', { n: 1 })
    await s.asked
    s.answerFraming()
    await first
    let written = 0
    const write = socket.write.bind(socket) as (chunk: string | Uint8Array) => boolean
    socket.write = ((chunk: string | Uint8Array) => { written++; return write(chunk) }) as typeof socket.write
    const next = c.request('status', { n: 2 })
    // what a pager does between asking for its next page and awaiting it: render, synchronously
    assert.equal(written, 1, 'written in the call, not in a later microtask')
    assert.deepEqual(await next, { n: 2 })
  })
})
