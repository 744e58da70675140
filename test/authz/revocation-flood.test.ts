// Issue 17 item 5: a stranger pushes 30,000 junk revocations to B; then the
// offline-delegation case (target@C -> mid@B -> leaf@A, revoked on B while A
// and C are offline): B's reconnect bundle still carries the real revocation
// and the revoked chain is refused at C. The junk is not stored.
import { strict as assert } from 'node:assert'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodeFrame } from '../../src/delivery/frame.js'
import { pageBundle, PAGE_BYTES } from '../../src/authz/grant-exchange.js'
import { defaultConfig } from '../../src/host/config.js'
import { startHost, type RunningHost as Host } from '../../src/host/components.js'
import { decodePacket, encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'
import { waitFor } from '../utils/hosts.js'
import { rawPacketStream } from '../utils/in-process.js'
import { junkRevocations, pushRevocations } from '../utils/junk.js'
import * as cbor from '@ipld/dag-cbor'

const JUNK = 30_000
const PAGE = 10_000

/** An in-process host on a home that outlives it (so it can go offline and come back). */
class Restartable {
  host!: Host
  readonly home = mkdtempSync(join(tmpdir(), 'amr-'))
  async start (): Promise<Host> {
    // no discovery, as the in-process host was before the composition root
    this.host = await startHost({ home: this.home, config: { ...defaultConfig(), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false }, logFile: join(this.home, 'amesh.log'), discovery: false })
    return this.host
  }

  async stop (): Promise<void> { await this.host?.stop().catch(() => {}) }
  get addr (): string { return this.host.libp2p.getMultiaddrs()[0].toString() }
  log (): string { return readFileSync(join(this.home, 'amesh.log'), 'utf8') }
}

async function ackCode (from: Host, to: string, p: Packet): Promise<string> {
  const s = await rawPacketStream(from, to)
  s.write(encodeFrame({ t: 'p', b: 1, p: [encodePacket(p)] }))
  const ack = await s.next()
  s.close()
  assert.ok(ack !== 'closed' && ack.t === 'a')
  const r = ack.r[0]
  return 'c' in r ? r.c : 'accepted'
}

describe('authz - a junk revocation flood does not let a revoked chain through', function () {
  this.timeout(300_000)
  const a = new Restartable()
  const b = new Restartable()
  const c = new Restartable()
  const j = new Restartable()

  after(async () => {
    for (const h of [a, b, c, j]) { await h.stop(); rmSync(h.home, { recursive: true, force: true }) }
  })

  it('bundles are paged under the message cap', () => {
    const revocations = junkRevocations(JUNK, 10)
    const pages = pageBundle({ chains: [], revocations })
    assert.ok(pages.length > 1)
    for (const p of pages) assert.ok(cbor.encode(p).length <= PAGE_BYTES, 'each page under PAGE_BYTES')
    assert.deepEqual(pages.flatMap((p) => p.revocations), revocations, 'every revocation once, in order')
  })

  it('offline delegation revoked on B; after 30,000 junk revocations, C still learns it and refuses the chain', async () => {
    await Promise.all([a.start(), b.start(), c.start(), j.start()])
    const target = await c.host.registry.add('target')
    const mid = await b.host.registry.add('mid')
    const leaf = await a.host.registry.add('leaf')
    await b.host.keeper.join(c.addr)
    await a.host.keeper.join(b.addr)
    await a.host.keeper.join(c.addr)
    await waitFor(async () => c.host.directory.get(mid.record.id) !== undefined && b.host.directory.get(leaf.record.id) !== undefined && c.host.directory.get(leaf.record.id) !== undefined, 20_000, 'cards to spread')
    const root = await c.host.acl.grant({ as: 'target', to: mid.record.id })
    await waitFor(async () => b.host.acl.store.findHeld(root.id), 10_000, 'mid to hold the root grant')
    const child = await b.host.acl.grant({ as: 'mid', to: leaf.record.id, delegate: root.id })
    const chain = (await waitFor(async () => a.host.acl.store.findHeld(child.id), 10_000, 'leaf to hold the delegation')).chain
    const packet = (text: string): Packet => ({ id: ulid(), from: leaf.record.id, to: target.record.id, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text }, ts: Date.now(), proof: { grants: chain } })
    assert.equal(await ackCode(a.host, c.addr, packet('before')), 'accepted', 'control: the delegated chain works')

    await a.stop()
    await c.stop()
    await b.host.acl.revoke('mid', child.id)

    await j.host.keeper.join(b.addr)
    const junk = junkRevocations(JUNK)
    for (let i = 0; i < JUNK; i += PAGE) await pushRevocations(j.host.libp2p, b.host.libp2p.peerId, junk.slice(i, i + PAGE)).catch(() => {})
    assert.equal(b.host.acl.store.allRevocations().length, 1, 'B stores (and forwards) only the real revocation')
    assert.deepEqual(b.host.acl.store.revocationsOf(child.id).map((r) => r.revoker), [mid.record.id])
    assert.match(b.log(), new RegExp(`revocations: peer ${j.host.libp2p.peerId.toString()} throttled`))
    assert.match(b.log(), new RegExp(`revocations: disconnecting peer ${j.host.libp2p.peerId.toString()}`))

    await c.start()
    await c.host.keeper.join(b.addr)
    await waitFor(async () => c.host.acl.store.revocationsOf(child.id).length > 0, 20_000, 'C to learn the revocation from B\'s reconnect bundle').catch(() => undefined)
    await a.start()
    assert.equal(await ackCode(a.host, c.addr, packet('after')), 'TOKEN_REVOKED')
    const texts = (await c.host.inbox.read(target.record.id, 0, 100)).map((e) => decodePacket(e.packet).payload.text ?? '')
    assert.deepEqual(texts.filter((t) => t === 'before' || t === 'after'), ['before'], 'only the packet sent before the revocation arrived')
  })
})
