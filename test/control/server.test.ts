import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import { ControlClient } from '../../src/control/client.js'
import { ControlServer, EncodedArray, method } from '../../src/control/server.js'
import { silentLogger } from '../../src/util/log.js'

/** values with text that needs escaping and multi-byte characters */
const VALUES = Array.from({ length: 100 }, (_, i) => ({ i, text: `line ${i}\n"quoted" \\ é 中 😀`, nested: [i, null, true, { k: 'v' }] }))

describe('control - socket server', () => {
  let dir: string
  let server: ControlServer
  let sock: string

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctl-'))
    sock = join(dir, 's.sock')
    server = new ControlServer(sock, {
      add: method({ params: z.object({ a: z.number(), b: z.number() }).strict(), call: async (p) => p.a + p.b }),
      count: method({
        params: z.object({ n: z.number().int() }).strict(),
        stream: async (p, sink) => { for (let i = 1; i <= p.n; i++) await sink.emit(i) }
      }),
      boom: method({ params: z.object({}).strict(), call: async () => { throw new Error('kaboom') } }),
      // the same values through the object path and the pre-encoded path
      values: method({ params: z.object({ n: z.number().int() }).strict(), call: async (p) => VALUES.slice(0, p.n) }),
      'values.encoded': method({
        params: z.object({ n: z.number().int() }).strict(),
        call: async (p) => new EncodedArray(p.n, (k, out) => { out.json(VALUES[k]) })
      }),
      'pages.encoded': method({
        params: z.object({ pages: z.number().int() }).strict(),
        stream: async (p, sink) => {
          for (let i = 0; i < p.pages; i++) {
            const page = VALUES.slice(i * 10, i * 10 + 10)
            await sink.emitFramed?.(sink.frame?.(page.length, (k, out) => { out.json(page[k]) }))
          }
        }
      }),
      big: method({ params: z.object({ kb: z.number().int() }).strict(), call: async (p) => 'é'.repeat(p.kb * 512) })
    }, silentLogger)
    await server.start()
  })

  after(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('the socket is 0600', () => {
    assert.equal(statSync(sock).mode & 0o777, 0o600)
  })

  it('answers calls and streams in order', async () => {
    const c = await ControlClient.connect(sock)
    assert.equal(await c.request('add', { a: 2, b: 3 }), 5)
    const seen: unknown[] = []
    await c.requestStream('count', { n: 5 }, (e) => seen.push(e))
    assert.deepEqual(seen, [1, 2, 3, 4, 5])
    c.close()
  })

  it('gives typed errors for an unknown method, bad arguments and a failing handler, and keeps serving', async () => {
    const c = await ControlClient.connect(sock)
    await assert.rejects(c.request('nope'), { code: 'UNKNOWN_METHOD' })
    await assert.rejects(c.request('add', { a: 'x', b: 1 }), { code: 'INVALID_ARGUMENT', message: /a/ })
    await assert.rejects(c.request('add', { a: 1, b: 2, c: 3 }), { code: 'INVALID_ARGUMENT' })
    await assert.rejects(c.request('boom'), { code: 'INTERNAL', message: 'kaboom' })
    assert.equal(await c.request('add', { a: 1, b: 1 }), 2)
    c.close()
  })

  it('answers a non-JSON line with INVALID_ARGUMENT instead of crashing', async () => {
    const line = await new Promise<string>((resolve) => {
      const s = connect(sock)
      s.setEncoding('utf8')
      s.on('data', (d: string) => { resolve(d); s.destroy() })
      s.write('this is not json\n')
    })
    assert.match(line, /INVALID_ARGUMENT/)
  })

  it('a pre-encoded array result arrives exactly as the same array encoded by the server', async () => {
    const c = await ControlClient.connect(sock)
    for (const n of [0, 1, 100]) {
      assert.deepEqual(await c.request('values.encoded', { n }), await c.request('values', { n }))
      assert.deepEqual(await c.request('values.encoded', { n }), VALUES.slice(0, n))
    }
    c.close()
  })

  it('pre-encoded pages of a stream arrive as the events, in order, then the stream ends', async () => {
    const c = await ControlClient.connect(sock)
    const seen: unknown[] = []
    await c.requestStream('pages.encoded', { pages: 10 }, (e) => seen.push(e))
    assert.deepEqual(seen, VALUES)
    c.close()
  })

  it('the raw reply lines of both paths are byte-identical', async () => {
    const lines = async (req: object): Promise<string> => await new Promise<string>((resolve) => {
      const s = connect(sock)
      let got = ''
      s.setEncoding('utf8')
      s.on('data', (d: string) => { got += d; if (got.endsWith('\n')) { resolve(got); s.destroy() } })
      s.write(JSON.stringify(req) + '\n')
    })
    assert.equal(await lines({ id: 9, method: 'values.encoded', params: { n: 3 } }), await lines({ id: 9, method: 'values', params: { n: 3 } }))
  })

  it('a reply of megabytes (a line across many socket reads) arrives whole', async () => {
    const c = await ControlClient.connect(sock)
    const text = await c.request<string>('big', { kb: 8 * 1024 })
    assert.equal(text.length, 8 * 1024 * 512)
    assert.ok([...new Set(text)].join('') === 'é')
    c.close()
  })
})
