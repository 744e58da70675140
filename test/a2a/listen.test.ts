// A2A face: off by default; on, it listens only where configured; config errors.
import { strict as assert } from 'node:assert'
import { startHost, readLog, type TestHost } from '../utils/hosts.js'
import { parseConfig } from '../../src/host/config.js'
import { faceBase } from './helpers.js'

describe('a2a face - where it listens', function () {
  this.timeout(120_000)
  const hosts: TestHost[] = []
  after(async () => { for (const h of hosts) await h.cleanup() })

  it('a2a face - off by default: no face, cards offer only the libp2p binding', async () => {
    const h = await startHost()
    hosts.push(h)
    await h.ok(['node', 'add', 'lead'])
    const c = await h.client()
    try {
      const info = await c.call('a2a.info')
      assert.equal(info.listen, null)
      const card = await c.call('card', { target: 'lead' }) as { supportedInterfaces: Array<{ protocolBinding: string }> }
      assert.deepEqual(card.supportedInterfaces.map((i) => i.protocolBinding), ['https://amesh.dev/bindings/libp2p/1.0'])
    } finally { c.close() }
  })

  it('a2a face - `up --a2a 127.0.0.1:0` binds that loopback address only', async () => {
    const h = await startHost({ extra: ['--a2a', '127.0.0.1:0'] })
    hosts.push(h)
    const base = await faceBase(h)
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/)
    const c = await h.client()
    try {
      const info = await c.call('a2a.info')
      assert.match(info.listen ?? '', /^127\.0\.0\.1:\d+$/)
      assert.equal(info.warning, null)
      const status = await c.call('status') as { a2a?: { listen: string | null } }
      assert.equal(status.a2a?.listen, info.listen)
    } finally { c.close() }
    const port = Number(base.split(':')[2])
    assert.equal((await fetch(`http://127.0.0.1:${port}/nodes`)).status, 200)
    // another loopback address of this machine: nothing listens there
    await assert.rejects(fetch(`http://127.0.0.2:${port}/nodes`))
    assert.doesNotMatch(readLog(h), /WARNING/)
  })

  it('a2a face - config: a2a needs listen HOST:PORT, cert and key go together, unknown keys are errors', () => {
    assert.equal(parseConfig('{}').a2a, undefined)
    assert.equal(parseConfig('a2a: {listen: "127.0.0.1:8470"}').a2a?.listen, '127.0.0.1:8470')
    assert.throws(() => parseConfig('a2a: {listen: "nope"}'), /HOST:PORT/)
    assert.throws(() => parseConfig('a2a: {listen: "127.0.0.1:1", cert: "c.pem"}'), /go together/)
    assert.throws(() => parseConfig('a2a: {listen: "127.0.0.1:1", colour: 1}'), /unknown key "a2a.colour"/)
  })
})
