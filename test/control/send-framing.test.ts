// `send` and `send.batch` through a real daemon as JSON lines (what scripts and
// older clients write) and as binary request frames (what ControlClient writes
// once the daemon said it reads them): the same stored packets and the same
// replies; a malformed frame gets MALFORMED_REQUEST_FRAME, stores nothing, and
// the connection keeps serving.
import { strict as assert } from 'node:assert'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import type { ControlClient } from '../../src/control/client.js'
import { FRAME_HEAD, FRAME_MARK } from '../../src/control/frame-head.js'
import { encodeRequestFrame, FRAMING_METHOD } from '../../src/control/request-frame.js'
import { startHost, type TestHost } from '../utils/hosts.js'

interface Reply { id: number, result?: Record<string, unknown>, error?: { code: string, message: string } }

/** A raw control connection: write bytes, read the reply of each id. */
class Raw {
  private buf = ''
  private readonly replies = new Map<number, Reply>()
  private readonly waiters = new Map<number, (r: Reply) => void>()
  private constructor (readonly socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => {
      this.buf += d
      let nl: number
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const r = JSON.parse(this.buf.slice(0, nl)) as Reply
        this.buf = this.buf.slice(nl + 1)
        const w = this.waiters.get(r.id)
        if (w !== undefined) { this.waiters.delete(r.id); w(r) } else this.replies.set(r.id, r)
      }
    })
  }

  static async open (h: TestHost): Promise<Raw> {
    const s = connect(join(h.home, 'amesh.sock'))
    await new Promise<void>((resolve, reject) => { s.once('connect', resolve); s.once('error', reject) })
    return new Raw(s)
  }

  async ask (id: number, bytes: string | Uint8Array): Promise<Reply> {
    this.socket.write(bytes)
    const got = this.replies.get(id)
    if (got !== undefined) return got
    return await new Promise((resolve) => this.waiters.set(id, resolve))
  }

  async line (id: number, method: string, params: unknown): Promise<Reply> {
    return await this.ask(id, JSON.stringify({ id, method, params }) + '\n')
  }
}

/** A stored packet as rendered, without what differs from one send to the next. */
function stable (e: Record<string, unknown>): Record<string, unknown> {
  const { id: _i, ts: _t, seq: _s, received: _r, ...rest } = e
  return rest
}

/** A reply without the message id (and seq: each copy has its own place in the inbox). */
function shape (r: Record<string, unknown>): Record<string, unknown> {
  const { id: _i, seq: _s, ...rest } = r
  return rest
}

describe('control - send as JSON lines and as binary frames', function () {
  this.timeout(120_000)
  let h: TestHost
  let c: ControlClient
  const raws: Raw[] = []

  before(async () => {
    h = await startHost()
    c = await h.client()
    await c.call('node.add', { name: 'bob' })
    await c.call('node.add', { name: 'al', parent: 'bob' })
  })
  after(async () => {
    for (const r of raws) r.socket.destroy()
    c?.close()
    await h?.cleanup()
  })

  const open = async (): Promise<Raw> => { const r = await Raw.open(h); raws.push(r); return r }
  const entries = async (after: number): Promise<Array<Record<string, unknown>>> =>
    await c.call('inbox.read', { node: 'bob', after, limit: 10_000 }) as unknown as Array<Record<string, unknown>>
  const last = async (): Promise<number> => {
    const inbox = (await c.call('status')).nodes.find((n) => n.name === 'bob')?.inbox
    if (inbox === undefined || 'error' in inbox) throw new Error('no inbox figures for bob')
    return inbox.last
  }

  it('the daemon says it reads binary request frames', async () => {
    const raw = await open()
    const r = await raw.line(1, FRAMING_METHOD, {})
    assert.deepEqual(r.result, { requests: ['ndjson', 'binary'], binary_methods: ['send', 'send.batch'] })
  })

  it('a send stores the same packet and answers the same way in both framings', async () => {
    const raw = await open()
    const params = { as: 'al', to: 'bob', text: 'héllo "there"\n😀 \\ end', signal: 'message', priority: 'high' as const, conversation_id: 'c-1', payload: { context: { k: [1, 'é'] } }, requires_reply: true }
    const before = await last()
    const viaLine = (await raw.line(5, 'send', params)).result as Record<string, unknown>
    const viaFrame = (await raw.ask(6, encodeRequestFrame(6, 'send', params) as Buffer)).result as Record<string, unknown>
    const viaClient = await c.call('send', params) as unknown as Record<string, unknown>
    assert.deepEqual(shape(viaFrame), shape(viaLine))
    assert.deepEqual(shape(viaClient), shape(viaLine))
    assert.equal(viaLine.state, 'delivered')
    const got = await entries(before)
    assert.deepEqual(got.map((e) => e.id), [viaLine.id, viaFrame.id, viaClient.id], 'each stored once, in order')
    assert.deepEqual(stable(got[1]), stable(got[0]))
    assert.deepEqual(stable(got[2]), stable(got[0]))
    assert.equal((got[1].payload as { text: string }).text, params.text)
  })

  it('a send.batch stores the same packets in the same order in both framings', async () => {
    const raw = await open()
    const sends = [
      { as: 'al', to: 'bob', text: 'one é' },
      { as: 'al', to: 'bob', payload: { text: 'in the payload', context: 'x' } },
      { as: 'al', to: 'nobody-here', text: 'refused' },
      { as: 'al', to: 'bob', text: '' }
    ]
    const before = await last()
    const viaLine = (await raw.line(7, 'send.batch', { sends })).result as { results: Array<Record<string, unknown>> }
    const viaFrame = (await raw.ask(8, encodeRequestFrame(8, 'send.batch', { sends }) as Buffer)).result as { results: Array<Record<string, unknown>> }
    assert.deepEqual(viaFrame.results.map(shape), viaLine.results.map(shape))
    assert.ok('error' in viaLine.results[2], 'the unknown target is refused in both')
    const got = await entries(before)
    assert.equal(got.length, 6)
    assert.deepEqual(got.slice(3).map(stable), got.slice(0, 3).map(stable))
  })

  it('a malformed frame gets MALFORMED_REQUEST_FRAME with its id, stores nothing, and the connection keeps serving', async () => {
    const raw = await open()
    const good = encodeRequestFrame(9, 'send', { as: 'al', to: 'bob', text: 'ab' }) as Buffer
    const broken = Buffer.from(good)
    broken[broken.length - 2] = 0xc3 // "ab" -> an unfinished two-byte sequence
    broken[broken.length - 1] = 0x28
    const before = await last()
    const r = await raw.ask(9, broken)
    assert.equal(r.error?.code, 'MALFORMED_REQUEST_FRAME')
    const wrongMethod = Buffer.from(good)
    const head = JSON.stringify({ method: 'send', params: { as: 'al', to: 'bob' } })
    wrongMethod.write(head.replace('"send"', '"ackk"'), FRAME_HEAD + 4) // same length: "send" -> "ackk"
    wrongMethod.writeUInt32BE(10, 1)
    assert.equal(wrongMethod[0], FRAME_MARK)
    assert.equal((await raw.ask(10, wrongMethod)).error?.code, 'MALFORMED_REQUEST_FRAME')
    assert.equal(await last(), before, 'nothing stored')
    const ok = await raw.line(11, 'send', { as: 'al', to: 'bob', text: 'after' })
    assert.equal(ok.result?.state, 'delivered')
    assert.equal(await last(), before + 1)
  })
})
