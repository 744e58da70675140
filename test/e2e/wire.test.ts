import { strict as assert } from 'node:assert'
import * as cbor from '@ipld/dag-cbor'
import { encodeFrame } from '../../src/delivery/frame.js'
import { encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'
import type { RunningHost as Host } from '../../src/host/components.js'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { rawPacketStream, startInProcessHost } from '../utils/in-process.js'

describe('e2e wire - the receiver rejects bad input with named reasons and keeps serving', function () {
  this.timeout(120_000)
  let h2: TestHost
  let x: { host: Host, stop: () => Promise<void> }
  let bobId: string
  let mallory: string
  let carolId: string

  before(async () => {
    h2 = await startHost()
    bobId = (JSON.parse(await h2.ok(['node', 'add', 'bob', '--json'])) as { id: string }).id
    carolId = (JSON.parse(await h2.ok(['node', 'add', 'carol', '--json'])) as { id: string }).id
    x = await startInProcessHost()
    mallory = (await x.host.registry.add('mallory')).record.id
    await x.host.keeper.join(h2.addr)
    // bob lets mallory send, so that only the bad input is what gets rejected
    await h2.ok(['grant', '--as', 'bob', '--to', mallory])
    await waitFor(async () => x.host.acl.store.heldFor(mallory, bobId).length > 0, 10_000, 'grant hand-off')
  })

  after(async () => {
    await x?.stop()
    await h2?.cleanup()
  })

  function packet (over: Partial<Packet> = {}): Packet {
    return { id: ulid(), from: mallory, to: bobId, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: Date.now(), proof: { grants: x.host.acl.store.heldFor(mallory, bobId)[0].chain }, ...over }
  }

  async function bobInbox (): Promise<Array<{ id: string, payload: { text?: string } }>> {
    return jsonLines(await h2.ok(['inbox', 'bob', '--json', '--after', '0']))
  }

  it('answers a malformed frame with MALFORMED_FRAME, and a bad packet inside a good frame with its own code', async () => {
    const raw = await rawPacketStream(x.host, h2.addr)
    raw.write(new Uint8Array([0xff, 0x00, 0x13, 0x37]))
    const reply = await raw.next()
    assert.ok(reply !== 'closed' && reply.t === 'e')
    assert.equal(reply.c, 'MALFORMED_FRAME')
    raw.close()

    const s = await rawPacketStream(x.host, h2.addr)
    const good = packet({ payload: { text: 'the good one' } })
    const { proof: _p1, ...bare } = packet()
    const returnWithContext = cbor.encode({ ...bare, signal: 'RETURN', payload: { context: 'source code' } })
    const unknownSignal = cbor.encode({ ...bare, id: ulid(), signal: 'SHOUT' })
    const oversized = new Uint8Array(600 * 1024)
    s.write(encodeFrame({ t: 'p', b: 7, p: [returnWithContext, unknownSignal, oversized, encodePacket(good)] }))
    const ack = await s.next()
    assert.ok(ack !== 'closed' && ack.t === 'a')
    assert.equal(ack.b, 7)
    const codes = ack.r.map((r) => ('c' in r ? r.c : 'ok'))
    assert.deepEqual(codes, ['SIGNAL_PAYLOAD', 'UNKNOWN_SIGNAL', 'PACKET_TOO_LARGE', 'ok'])
    s.close()
    const inbox = await bobInbox()
    assert.deepEqual(inbox.map((p) => p.id), [good.id], 'only the valid packet entered the inbox')
  })

  it('rejects a packet claiming a node the sending host does not serve (CHANNEL_BINDING)', async () => {
    const forged = packet({ from: carolId, proof: undefined })
    const s = await rawPacketStream(x.host, h2.addr)
    s.write(encodeFrame({ t: 'p', b: 1, p: [encodePacket(forged)] }))
    const ack = await s.next()
    assert.ok(ack !== 'closed' && ack.t === 'a')
    assert.ok('c' in ack.r[0])
    assert.equal(ack.r[0].c, 'CHANNEL_BINDING')
    s.close()
    assert.equal((await bobInbox()).length, 1, 'inbox unchanged')
  })

  it('drops a replayed packet (same id) and answers with the original seq', async () => {
    const p = packet({ payload: { text: 'once' } })
    const s = await rawPacketStream(x.host, h2.addr)
    s.write(encodeFrame({ t: 'p', b: 1, p: [encodePacket(p)] }))
    s.write(encodeFrame({ t: 'p', b: 2, p: [encodePacket(p)] }))
    const a1 = await s.next()
    const a2 = await s.next()
    assert.ok(a1 !== 'closed' && a1.t === 'a' && a2 !== 'closed' && a2.t === 'a')
    assert.ok('s' in a1.r[0] && 's' in a2.r[0])
    assert.equal(a1.r[0].s, a2.r[0].s)
    s.close()
    const texts = (await bobInbox()).map((e) => e.payload.text)
    assert.deepEqual(texts, ['the good one', 'once'])
  })

  it('keeps serving: a normal message still arrives after the bad input', async () => {
    const r = await x.host.delivery.enqueue(packet({ payload: { text: 'still here' } }), encodePacket(packet({ payload: { text: 'still here' } })), h2.peerId, 60_000)
    assert.equal(r.state, 'queued')
    await waitFor(async () => (await bobInbox()).some((e) => e.payload.text === 'still here'), 20_000, 'delivery after bad input')
  })
})
