// Receipts across two real hosts: the receiving host reports pushed and read
// to the sending host over /amesh/receipt/1.0.0; `send --wait read` returns
// only after the remote session acked; a sender that was down gets the
// receipt when it is back; a crafted receipt for a message not received is refused.
import { strict as assert } from 'node:assert'
import { execFile, type ChildProcess } from 'node:child_process'
import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as cbor from '@ipld/dag-cbor'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { RECEIPT_PROTOCOL, signReceipt } from '../../src/delivery/receipts-protocol.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { amesh, BIN, makeHome, Session, startHost, stopHost, textOf, until } from './harness.js'

interface Receipt { id: string, state: string, events: Array<{ state: string, at: number, time: string, reason?: string }> }

describe('mcp - receipts between two hosts', function () {
  this.timeout(240_000)
  let a = '' // the sender's host
  let b = '' // the receiver's host, with the session
  let addrB = ''
  let s: Session
  let leadId = ''
  const children: ChildProcess[] = []

  async function receipt (id: string): Promise<Receipt> {
    return JSON.parse(await amesh(['receipt', id, '--json', '--home', a])) as Receipt
  }

  async function stateIs (id: string, ...states: string[]): Promise<Receipt> {
    return await until(`${id} to be ${states.join(' or ')}`, async () => { const r = await receipt(id); return states.includes(r.state) ? r : undefined }, 60_000)
  }

  before(async () => {
    a = makeHome()
    b = makeHome()
    appendFileSync(join(b, 'config.yaml'), 'hide_read_receipts: [quiet]\n')
    addrB = await startHost(b)
    await startHost(a, addrB)
    s = await Session.start(b, ['--name', 'lead'])
    await amesh(['node', 'add', 'writer', '--home', a])
    const g = await s.tool('grant', { to: 'writer' })
    const token = (JSON.parse(textOf(g)) as { token_id: string }).token_id
    await until('host A to hold the grant', async () => {
      const held = (JSON.parse(await amesh(['grants', '--json', '--home', a])) as { held: Array<{ token_id: string }> }).held
      return held.some((h) => h.token_id === token) ? true : undefined
    })
    await amesh(['grant', '--as', 'writer', '--to', 'lead', '--home', a])
    await until('lead may message writer', async () => {
      const nodes = JSON.parse(textOf(await s.tool('nodes'))) as Array<{ name: string, may_message: boolean }>
      return nodes.some((n) => n.name === 'writer' && n.may_message) ? true : undefined
    })
    leadId = (JSON.parse(textOf(await s.tool('status'))) as { node: { id: string } }).node.id
  })

  after(async () => {
    for (const c of children) c.kill('SIGKILL')
    await s?.close()
    await Promise.all([stopHost(a), stopHost(b)])
  })

  it('receipts - send --wait read returns only after the remote session acked; the history is delivered → pushed → read', async () => {
    let exited: { code: number | null, stdout: string } | undefined
    const child = execFile(process.execPath, [BIN, 'send', '--as', 'writer', 'lead', 'are you there', '--wait', 'read', '--timeout', '2m', '--home', a], (err, stdout) => {
      exited = { code: err === null ? 0 : (typeof err.code === 'number' ? err.code : null), stdout }
    })
    children.push(child)
    const [event] = await s.waitChannel(1)
    const id = String(event.meta?.msg_id)
    await stateIs(id, 'pushed')
    assert.equal(exited, undefined, 'send --wait read is still waiting while the message is only pushed')
    const acked = await s.tool('ack', { msg_ids: [id] })
    assert.equal(acked.isError, undefined, textOf(acked))
    const done = await until('send --wait to return', () => exited, 60_000)
    assert.equal(done.code, 0, done.stdout)
    assert.match(done.stdout, new RegExp(`${id} read`))
    const r = await receipt(id)
    assert.deepEqual(r.events.map((e) => e.state), ['queued', 'delivered', 'pushed', 'read'])
    for (const e of r.events) assert.ok(!Number.isNaN(Date.parse(e.time)))
    // the MCP send result gives the id; the receipt tool shows its state
    const sent = await s.tool('send', { to: 'writer', text: 'and back' })
    assert.equal(sent.isError, undefined, textOf(sent))
    const back = JSON.parse(textOf(sent)) as { id: string, state: string, receipt: string }
    assert.equal(back.state, 'queued')
    await until('the receipt tool to say delivered', async () => {
      const t = await s.tool('receipt', { msg_id: back.id })
      return (JSON.parse(textOf(t)) as { state: string }).state === 'delivered' ? true : undefined
    })
  })

  it('receipts - --wait on timeout exits non-zero with the state reached', async () => {
    const out = await new Promise<{ code: number | null, stdout: string }>((resolve) => {
      execFile(process.execPath, [BIN, 'send', '--as', 'writer', 'lead', 'unanswered', '--wait', 'read', '--timeout', '3s', '--home', a], (err, stdout) => {
        resolve({ code: err === null ? 0 : (typeof err.code === 'number' ? err.code : null), stdout })
      })
    })
    assert.equal(out.code, 3)
    assert.match(out.stdout.trim().split('\n').pop() ?? '', / (queued|delivered|pushed)$/)
  })

  it('receipts - a sender host down while the receiver read gets the receipt when it is back', async () => {
    const id = (await amesh(['send', '--as', 'writer', 'lead', 'read me while they are away', '--home', a])).split(' ')[0]
    await until('the push', () => s.channel.find((e) => e.meta?.msg_id === id))
    await stateIs(id, 'pushed')
    await amesh(['down', '--home', a])
    const acked = await s.tool('ack', { msg_ids: [id] })
    assert.equal(acked.isError, undefined, textOf(acked))
    await startHost(a, addrB)
    const r = await stateIs(id, 'read')
    assert.deepEqual(r.events.map((e) => e.state), ['queued', 'delivered', 'pushed', 'read'])
  })

  it('receipts - a receiver that hides read reports pushed only; --no-receipt keeps no receipts', async () => {
    const quiet = await Session.start(b, ['--name', 'quiet'])
    try {
      const g = JSON.parse(textOf(await quiet.tool('grant', { to: 'writer' }))) as { token_id: string }
      await until('host A to hold quiet\'s grant', async () => {
        const held = (JSON.parse(await amesh(['grants', '--json', '--home', a])) as { held: Array<{ token_id: string }> }).held
        return held.some((h) => h.token_id === g.token_id) ? true : undefined
      })
      const hidden = (await amesh(['send', '--as', 'writer', 'quiet', 'read but not told', '--home', a])).split(' ')[0]
      await quiet.waitChannel(1)
      await stateIs(hidden, 'pushed')
      await quiet.tool('ack', { msg_ids: [hidden] })
      const off = (await amesh(['send', '--as', 'writer', 'lead', 'no receipts please', '--no-receipt', '--home', a])).split(' ')[0]
      await until('the push', () => s.channel.find((e) => e.meta?.msg_id === off))
      await s.tool('ack', { msg_ids: [off] })
      // a later message with receipts is read and reported after both
      const later = (await amesh(['send', '--as', 'writer', 'lead', 'with receipts', '--home', a])).split(' ')[0]
      await until('the push', () => s.channel.find((e) => e.meta?.msg_id === later))
      await s.tool('ack', { msg_ids: [later] })
      await stateIs(later, 'read')
      assert.equal((await receipt(hidden)).state, 'pushed', 'quiet hides read')
      const r = await receipt(off)
      assert.ok(!r.events.some((e) => e.state === 'pushed' || e.state === 'read'), `no receipts kept: ${JSON.stringify(r.events)}`)
      assert.deepEqual(r.events.map((e) => e.state), ['queued', 'delivered'])
      // no_receipt is a packet field: the receiving host queued no receipt for it at all (none was sent and refused)
      const logB = readFileSync(join(b, 'amesh.log'), 'utf8')
      assert.ok(!logB.includes(off), `the receiving host logged nothing about ${off}: ${logB.split('\n').filter((l) => l.includes(off)).join(' | ')}`)
    } finally {
      await quiet.close()
    }
  })

  it('receipts - crafted receipts for messages a host did not receive are refused', async () => {
    const id = (await amesh(['send', '--as', 'writer', 'lead', 'no forged read', '--home', a])).split(' ')[0]
    await stateIs(id, 'delivered', 'pushed')
    const addrA = (JSON.parse(await amesh(['id', '--json', '--home', a])) as { addrs: string[], peerId: string })
    const [{ noise }, { yamux }, { identify }, { tcp }, { createLibp2p }] = await Promise.all([
      import('@chainsafe/libp2p-noise'), import('@chainsafe/libp2p-yamux'), import('@libp2p/identify'), import('@libp2p/tcp'), import('libp2p')
    ])
    const forger = await createLibp2p({ addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] }, transports: [tcp()], connectionEncrypters: [noise()], streamMuxers: [yamux()], services: { identify: identify() } })
    try {
      const own = generateNodeKey()
      const frame = {
        receipts: [
          // signed by a node the message did not go to
          signReceipt(own, { v: 1, p: id, n: own.id, s: 'read', t: Date.now() }),
          // claims the receiving node but is not signed by its key
          cbor.encode([cbor.encode({ v: 1, p: id, n: leadId, s: 'read', t: Date.now() }), own.sign(new Uint8Array(64))]),
          // a message host A never sent
          signReceipt(own, { v: 1, p: '01J0000000000000000000000', n: own.id, s: 'read', t: Date.now() })
        ]
      }
      const stream = await forger.dialProtocol(multiaddr(`${addrA.addrs[0]}`), RECEIPT_PROTOCOL)
      await stream.sink(lp.encode([cbor.encode(frame)]))
      let reply: { results: string[] } | undefined
      for await (const chunk of lp.decode(stream.source)) { reply = cbor.decode(chunk.subarray()); break }
      assert.equal(reply?.results.length, 3)
      assert.match(reply?.results[0] ?? '', /^WRONG_NODE/)
      assert.match(reply?.results[1] ?? '', /^BAD_SIGNATURE/)
      assert.match(reply?.results[2] ?? '', /^UNKNOWN_MESSAGE/)
    } finally {
      await forger.stop()
    }
    const r = await receipt(id)
    assert.ok(!r.events.some((e) => e.state === 'read'), 'no forged read')
  })

  it('presence - nodes on the sender\'s host shows whether a session of a remote node is attached now and when one last read', async () => {
    interface Row { name: string, local: boolean, session?: { attached: number, last_read?: string, last_attach?: string } }
    const rows = async (): Promise<Row[]> => (await amesh(['nodes', '--json', '--home', a])).trim().split('\n').map((l) => JSON.parse(l) as Row)
    const all = await rows()
    const lead = all.find((r) => r.name === 'lead')
    assert.equal(lead?.local, false)
    assert.equal(lead?.session?.attached, 1, JSON.stringify(lead))
    assert.ok(!Number.isNaN(Date.parse(lead?.session?.last_read ?? '')), 'lead has read: its last read is told')
    // quiet's session ended in an earlier test, after it read; quiet hides read, so when it read is not told either
    const quiet = all.find((r) => r.name === 'quiet')
    assert.equal(quiet?.session?.attached, 0, JSON.stringify(quiet))
    assert.ok(!Number.isNaN(Date.parse(quiet?.session?.last_attach ?? '')), 'quiet attached once')
    assert.equal(quiet?.session?.last_read, undefined, 'hide_read_receipts hides the last read')
    // the sender's own node carries its presence from its own host, as before
    assert.equal(all.find((r) => r.name === 'writer')?.session?.attached, 0)
    // and the MCP nodes tool of the session on the other host shows writer's presence as host A answers it
    const seen = JSON.parse(textOf(await s.tool('nodes'))) as Row[]
    assert.equal(seen.find((r) => r.name === 'writer')?.session?.attached, 0, JSON.stringify(seen))
  })

  it('receipts - a message still queued is known after the sender restarts (from its outbox entry: nothing else is stored at send time)', async () => {
    const c = makeHome()
    try {
      await startHost(c, addrB)
      await amesh(['node', 'add', 'far', '--home', c])
      const g = JSON.parse(await amesh(['grant', '--as', 'far', '--to', 'writer', '--json', '--home', c])) as { token_id: string }
      await until('host A to hold far\'s grant', async () => {
        const held = (JSON.parse(await amesh(['grants', '--json', '--home', a])) as { held: Array<{ token_id: string }> }).held
        return held.some((h) => h.token_id === g.token_id) ? true : undefined
      }, 60_000)
      await amesh(['down', '--home', c])
      const id = (await amesh(['send', '--as', 'writer', 'far', 'wait for me', '--home', a])).split(' ')[0]
      await amesh(['down', '--home', a])
      await startHost(a, addrB)
      const r = await receipt(id)
      assert.equal(r.state, 'queued')
      assert.deepEqual(r.events.map((e) => e.state), ['queued'])
      assert.ok(!Number.isNaN(Date.parse(r.events[0].time)))
    } finally {
      await stopHost(c)
    }
  })
})
