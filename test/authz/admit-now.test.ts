// AclService.admitNow (the receiver's decision without a wait) against admit,
// its reference, on two real in-process hosts: wherever admitNow answers, it
// gives admit's decision (allowed, the ACL's denial, a wrong host, a node not
// served here); it leaves to admit the cases that need a wait (a sender whose
// host is not known yet, a signal-destination rule).
import { strict as assert } from 'node:assert'
import type { Packet } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { waitFor } from '../utils/hosts.js'
import { startInProcessHost } from '../utils/in-process.js'
import type { RunningHost as Host } from '../../src/host/components.js'

describe('authz - admitNow decides as admit wherever it answers', function () {
  this.timeout(60_000)
  let x: { host: Host, stop: () => Promise<void> }
  let y: { host: Host, stop: () => Promise<void> }
  let mallory: string
  let eve: string
  let bob: string
  let carol: string

  before(async () => {
    x = await startInProcessHost()
    y = await startInProcessHost()
    mallory = (await x.host.registry.add('mallory')).record.id
    eve = (await x.host.registry.add('eve')).record.id
    bob = (await y.host.registry.add('bob')).record.id
    carol = (await y.host.registry.add('carol')).record.id
    await x.host.keeper.join(y.host.libp2p.getMultiaddrs()[0].toString())
    // bob lets mallory send MESSAGEs in zone project; carol grants nobody
    await y.host.acl.grant({ as: 'bob', to: mallory, signals: ['MESSAGE'], zones: ['project'] })
    await waitFor(async () => x.host.acl.store.heldFor(mallory, bob).length > 0, 20_000, 'grant hand-off')
    await waitFor(async () => y.host.directory.hostOf(mallory) !== undefined && y.host.directory.hostOf(eve) !== undefined, 20_000, 'cards')
  })

  after(async () => {
    await x?.stop()
    await y?.stop()
  })

  function packet (from: string, to: string, over: Partial<Packet> = {}): Packet {
    const held = x.host.acl.store.heldFor(from, to)
    return {
      id: ulid(), from, to, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: Date.now(),
      ...(held.length > 0 ? { proof: { grants: held[0].chain } } : {}),
      ...over
    }
  }

  it('gives admit\'s decision, or leaves it to admit', async () => {
    const xPeer = x.host.libp2p.peerId.toString()
    const stranger = generateNodeKey().id
    const cases: Array<{ name: string, p: Packet, peer: string, now: 'decides' | 'waits' }> = [
      { name: 'allowed by the grant', p: packet(mallory, bob), peer: xPeer, now: 'decides' },
      { name: 'the grant does not cover the zone', p: packet(mallory, bob, { scope: { files: [], zone: 'personal' } }), peer: xPeer, now: 'decides' },
      { name: 'the grant does not cover the signal', p: packet(mallory, bob, { signal: 'SPAWN', payload: { context: { task: 't' } } }), peer: xPeer, now: 'decides' },
      { name: 'no grant (another sender)', p: packet(eve, bob), peer: xPeer, now: 'decides' },
      { name: 'no grant (another target)', p: packet(mallory, carol), peer: xPeer, now: 'decides' },
      { name: 'a target not served here', p: packet(mallory, stranger), peer: xPeer, now: 'decides' },
      { name: 'the wrong sending host', p: packet(mallory, bob), peer: y.host.libp2p.peerId.toString(), now: 'decides' },
      { name: 'a RETURN (a signal-destination rule)', p: packet(mallory, bob, { signal: 'RETURN', payload: { result: 'r' }, in_reply_to: ulid() }), peer: xPeer, now: 'waits' },
      { name: 'a sender whose host is not known', p: packet(stranger, bob), peer: xPeer, now: 'waits' }
    ]
    for (const c of cases) {
      const now = y.host.acl.admitNow(c.p, c.peer)
      if (c.now === 'waits') { assert.equal(now, undefined, c.name); continue }
      assert.notEqual(now, undefined, c.name)
      // the reference; twice over for the decision cache (a cached allow must match too)
      assert.deepEqual(now, await y.host.acl.admit(c.p, c.peer), c.name)
      assert.deepEqual(y.host.acl.admitNow(c.p, c.peer), await y.host.acl.admit(c.p, c.peer), `${c.name}, again`)
    }
    assert.equal(y.host.acl.admitNow(cases[0].p, xPeer), null, 'the granted packet is allowed')
    for (const c of cases.slice(1, 7)) assert.notEqual(y.host.acl.admitNow(c.p, c.peer), null, `${c.name}: denied`)
  })
})
