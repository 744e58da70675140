// The managed-node service's lifecycle (agents/service.ts) on a real host:
// start serves the placement protocol once (a second start does not
// register it again, which libp2p would refuse), stop takes it back (also
// twice), and the manager it exposes answers over the host's components.
import { strict as assert } from 'node:assert'
import { AGENTS_PROTOCOL } from '../../src/agents/constants.js'
import { createAgents } from '../../src/agents/service.js'
import { agentsComponents } from '../../src/host/components.js'
import { startHost, stopHosts, type TestHost } from '../discovery/hosts.js'

describe('agents - the service starts and stops once, and again', function () {
  this.timeout(60_000)
  const hosts: TestHost[] = []

  before(async () => { hosts.push(await startHost([], { gossip: false })) })
  after(async () => { await stopHosts(hosts) })

  it('lifecycle - placement is served once while started and not after stop; the manager lists nothing on a new host', async () => {
    const { host } = hosts[0]
    const served = (): number => host.libp2p.getProtocols().filter((p) => p === AGENTS_PROTOCOL).length
    const agents = createAgents(agentsComponents(host))
    assert.equal(served(), 0)
    await agents.start()
    await agents.start()
    assert.equal(served(), 1)
    await agents.restore()
    assert.deepEqual(agents.manager.list(), [])
    assert.equal(agents.issuer.id, agents.manager.issuer.id)
    await agents.stop()
    assert.equal(served(), 0)
    await agents.stop()
    assert.equal(served(), 0)
    await agents.start()
    assert.equal(served(), 1)
    await agents.stop()
    assert.equal(served(), 0)
  })
})
