import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import { ControlClient } from '../../src/control/client.js'
import { ControlServer, method } from '../../src/control/server.js'
import { silentLogger } from '../../src/util/log.js'

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
      boom: method({ params: z.object({}).strict(), call: async () => { throw new Error('kaboom') } })
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
    assert.equal(await c.call('add', { a: 2, b: 3 }), 5)
    const seen: unknown[] = []
    await c.stream('count', { n: 5 }, (e) => seen.push(e))
    assert.deepEqual(seen, [1, 2, 3, 4, 5])
    c.close()
  })

  it('gives typed errors for an unknown method, bad arguments and a failing handler, and keeps serving', async () => {
    const c = await ControlClient.connect(sock)
    await assert.rejects(c.call('nope'), { code: 'UNKNOWN_METHOD' })
    await assert.rejects(c.call('add', { a: 'x', b: 1 }), { code: 'INVALID_ARGUMENT', message: /a/ })
    await assert.rejects(c.call('add', { a: 1, b: 2, c: 3 }), { code: 'INVALID_ARGUMENT' })
    await assert.rejects(c.call('boom'), { code: 'INTERNAL', message: 'kaboom' })
    assert.equal(await c.call('add', { a: 1, b: 1 }), 2)
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
})
