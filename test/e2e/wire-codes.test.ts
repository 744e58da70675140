// Codes on the wire and for `join` (issue 17, item 7): undecodable packet-
// protocol input answers MALFORMED_FRAME as docs/PROTOCOL.md says (four such
// inputs answered INTERNAL), and `join` tells a bad address (INVALID_ADDRESS)
// from an unreachable one (UNREACHABLE), both once INTERNAL.
import { strict as assert } from 'node:assert'
import * as lp from 'it-length-prefixed'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { MAX_FRAME_BYTES, PACKET_PROTOCOL, decodeFrame, encodeFrame, type Frame } from '../../src/delivery/frame.js'
import type { RunningHost as Host } from '../../src/host/components.js'
import { startHost, type TestHost } from '../utils/hosts.js'
import { startInProcessHost } from '../utils/in-process.js'
import { call, freePort, status } from '../delivery/helpers.js'

/** Write raw bytes (no length prefix added) on a packet stream, then read the first reply frame. */
async function rawReply (host: Host, addr: string, bytes: Uint8Array, endInput: boolean): Promise<Frame | 'closed'> {
  const ma = multiaddr(addr)
  await host.libp2p.dial(ma)
  const stream = await host.libp2p.dialProtocol(peerIdFromString(ma.getPeerId() ?? ''), PACKET_PROTOCOL)
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  void stream.sink((async function * () {
    yield bytes
    if (!endInput) await held
  })()).catch(() => {})
  try {
    for await (const chunk of lp.decode(stream.source)) return decodeFrame(chunk.subarray())
    return 'closed'
  } catch {
    return 'closed'
  } finally {
    release()
    stream.abort(new Error('done'))
  }
}

function prefixed (frame: Uint8Array): Uint8Array {
  const parts = [...lp.encode.single(frame)]
  return Uint8Array.from(Buffer.concat(parts.map((p) => p.subarray())))
}

describe('e2e wire - MALFORMED_FRAME for undecodable input, INVALID_ADDRESS / UNREACHABLE for join', function () {
  this.timeout(120_000)
  let h: TestHost
  let x: { host: Host, stop: () => Promise<void> }

  before(async () => {
    h = await startHost()
    x = await startInProcessHost()
  })

  after(async () => {
    await x?.stop()
    await h?.cleanup()
  })

  const cases: Array<{ name: string, bytes: () => Uint8Array, endInput: boolean }> = [
    { name: 'an ack frame (a receiver takes packet frames only)', bytes: () => prefixed(encodeFrame({ t: 'a', b: 1, r: [{ s: 1 }] })), endInput: false },
    { name: 'an error frame', bytes: () => prefixed(encodeFrame({ t: 'e', c: 'X', m: 'y' })), endInput: false },
    { name: `a length prefix over the ${MAX_FRAME_BYTES}-byte frame limit`, bytes: () => Uint8Array.from([0x80, 0x80, 0x80, 0x08, 0x70]), endInput: false },
    { name: 'a length prefix that is not a varint (ten continuation bytes)', bytes: () => new Uint8Array(10).fill(0xff), endInput: false },
    { name: 'a frame cut short by the end of the stream', bytes: () => Uint8Array.from([100, 0x70, 0, 0, 0, 1]), endInput: true }
  ]
  for (const c of cases) {
    it(`${c.name} answers MALFORMED_FRAME and the host keeps serving`, async () => {
      const reply = await rawReply(x.host, h.addr, c.bytes(), c.endInput)
      assert.ok(reply !== 'closed', 'an error frame comes back')
      assert.equal(reply.t, 'e')
      assert.equal(reply.t === 'e' ? reply.c : '', 'MALFORMED_FRAME')
      assert.ok((await status(h)).pid > 0, 'still serving')
    })
  }

  it('join: a bad address answers INVALID_ADDRESS, an unreachable one UNREACHABLE', async () => {
    const codeOf = async (addr: string): Promise<string> => {
      try { await call(h, 'join', { addr }); return 'ok' } catch (err) { return (err as { code?: string }).code ?? 'none' }
    }
    assert.equal(await codeOf('not a multiaddr'), 'INVALID_ADDRESS')
    assert.equal(await codeOf('/ip4/127.0.0.1/tcp/notaport'), 'INVALID_ADDRESS')
    const port = await freePort()
    // a port nobody listens on, and a peer id no host has
    const nobody = `/ip4/127.0.0.1/tcp/${port}/p2p/${peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()}`
    assert.equal(await codeOf(nobody), 'UNREACHABLE')
  })
})
