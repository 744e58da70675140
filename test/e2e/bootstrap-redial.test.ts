import { strict as assert } from 'node:assert'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'

interface NodeRow { name: string, local: boolean }

describe('e2e bootstrap peer down at start', function () {
  this.timeout(90_000)
  let a: TestHost | undefined
  let b: TestHost | undefined

  after(async () => {
    await b?.cleanup()
    await a?.cleanup()
  })

  it('a host whose bootstrap peer was down when it started connects once that peer is up', async () => {
    a = await startHost()
    await a.ok(['node', 'add', 'alice'])
    await a.stop()
    // B starts with A as its only peer while A is down: the start-up dial fails
    b = await startHost({ peers: [a.addr] })
    await b.ok(['node', 'add', 'bob'])
    const nodesOf = async (h: TestHost): Promise<NodeRow[]> => jsonLines<NodeRow>(await h.ok(['nodes', '--json']))
    assert.equal((await nodesOf(b)).some((n) => n.name === 'alice'), false)
    // A comes back on the same address; nobody tells B
    await a.start()
    const host = a
    await waitFor(async () => (await nodesOf(b as TestHost)).some((n) => n.name === 'alice' && !n.local), 45_000, 'b to reach a again and learn alice')
    await waitFor(async () => (await nodesOf(host)).some((n) => n.name === 'bob' && !n.local), 20_000, 'a to learn bob')
  })
})
