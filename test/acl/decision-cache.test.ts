// The allow-decision cache never outlives what it was decided from: a
// revocation, a block, a profile change (through the ACL service or straight
// in the node store) and a token's expiry all take effect on the next packet.
import { strict as assert } from 'node:assert'
import { encodeRevocation, encodeToken, issueRevocation, issueToken, tokenId } from '../../src/acl/index.js'
import { generateNodeKey, type NodeKey } from '../../src/identity/node-key.js'
import type { RunningHost as Host } from '../../src/host/components.js'
import type { Packet } from '../../src/packet/types.js'
import type { LocalNode } from '../../src/store/nodes.js'
import { ulid } from '../../src/util/ulid.js'
import { startInProcessHost } from '../utils/in-process.js'

function packetFrom (sender: NodeKey, to: string, grants?: Uint8Array[]): Packet {
  const p: Packet = { id: ulid(), from: sender.id, to, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: Date.now() }
  if (grants !== undefined) p.proof = { grants }
  return p
}

function grantFrom (rx: LocalNode, sender: NodeKey, lifeMs = 3_600_000): Uint8Array {
  return encodeToken(issueToken(rx.key, { aud: sender.id, sub: rx.record.id, exp: Date.now() + lifeMs }))
}

async function sleep (ms: number): Promise<void> { await new Promise((resolve) => setTimeout(resolve, ms)) }

describe('acl decision cache', function () {
  this.timeout(60_000)
  let host: Host
  let stop: () => Promise<void>
  let rx: LocalNode
  const sender = generateNodeKey()

  before(async () => {
    ({ host, stop } = await startInProcessHost())
    rx = await host.registry.add('rx')
  })
  after(async () => { await stop?.() })
  beforeEach(() => { host.acl.receiveCache.clear(); host.acl.sendCache.clear() })

  const admit = (grants?: Uint8Array[]): string | null => host.acl.receiveDecision(packetFrom(sender, rx.record.id, grants))?.code ?? null

  it('caches an allow and drops it on revocation', async () => {
    const tok = grantFrom(rx, sender)
    assert.equal(admit([tok]), null)
    assert.equal(host.acl.receiveCache.size, 1)
    assert.equal(admit([tok]), null)
    await host.acl.store.revoke(encodeRevocation(issueRevocation(rx.key, tokenId(tok))))
    assert.equal(admit([tok]), 'TOKEN_REVOKED')
  })

  it('drops a cached allow on block, and unblock restores', async () => {
    const tok = grantFrom(rx, sender)
    assert.equal(admit([tok]), null)
    assert.equal(host.acl.receiveCache.size, 1)
    await host.acl.store.setBlock(rx.record.id, sender.id, true)
    assert.equal(admit([tok]), 'NO_GRANT')
    await host.acl.store.setBlock(rx.record.id, sender.id, false)
    assert.equal(admit([tok]), null)
  })

  it('drops a cached allow on a profile change, through the service or the node store', async () => {
    const tok = grantFrom(rx, sender)
    assert.equal(admit([tok]), null)
    await host.acl.setProfile('rx', { signals: ['ESCALATE'] })
    assert.equal(admit([tok]), 'PROFILE_SIGNAL')
    await host.acl.setProfile('rx', {})
    assert.equal(admit([tok]), null)
    assert.equal(host.acl.receiveCache.size, 1)
    // a change that bypasses the ACL service (e.g. an agent spec) misses by node identity
    const node = host.nodes.get('rx') as LocalNode
    await host.nodes.update({ ...node.record, profile: { zone_access: ['kernel'] } })
    assert.equal(admit([tok]), 'PROFILE_ZONE')
    await host.acl.setProfile('rx', {})
  })

  it('a cached allow never outlives the chain expiry', async () => {
    const tok = grantFrom(rx, sender, 300)
    assert.equal(admit([tok]), null)
    assert.equal(host.acl.receiveCache.size, 1)
    await sleep(350)
    assert.equal(admit([tok]), 'TOKEN_EXPIRED')
  })

  it('a different proof is decided afresh', async () => {
    const tok = grantFrom(rx, sender)
    assert.equal(admit([tok]), null)
    const stranger = generateNodeKey()
    const forged = encodeToken(issueToken(stranger, { aud: sender.id, sub: rx.record.id, exp: Date.now() + 3_600_000 }))
    assert.equal(admit([forged]), 'TOKEN_ISSUER')
    assert.equal(admit(), 'NO_GRANT')
  })

  it('sender side: a cached allow attaches the same proof and is dropped on revocation', async () => {
    const tx = await host.registry.add('tx')
    const target = await host.resolver.resolve('rx')
    const granted = await host.acl.grant({ as: 'rx', to: 'tx' })
    const send = async (): Promise<Packet> => {
      const p = packetFrom(tx.key, rx.record.id)
      await host.acl.authorizeSend(p, tx, target)
      return p
    }
    const first = await send()
    assert.equal(host.acl.sendCache.size, 1)
    const second = await send()
    assert.deepEqual(second.proof, first.proof)
    assert.equal(second.proof?.grants?.length, 1)
    await host.acl.revoke('rx', granted.id)
    await assert.rejects(send(), /TOKEN_REVOKED/)
  })
})
