// The composition root's one start/stop loop: services start in the order
// they were added and stop in reverse; start and stop are safe to call twice;
// a failing start stops what already started (and the failed one), not the rest.
import { strict as assert } from 'node:assert'
import { Lifecycle } from '../../src/host/lifecycle.js'

function recorder (): { events: string[], service: (name: string, failStart?: boolean) => { start: () => Promise<void>, stop: () => void } } {
  const events: string[] = []
  return {
    events,
    service: (name, failStart = false) => ({
      start: async () => { events.push(`start ${name}`); if (failStart) throw new Error(`${name} failed`) },
      stop: () => { events.push(`stop ${name}`) }
    })
  }
}

describe('host - lifecycle', () => {
  const logs: string[] = []
  const log = (line: string): void => { logs.push(line) }

  it('starts in order, stops in reverse, each once however often it is called', async () => {
    const r = recorder()
    const lc = new Lifecycle(log)
    for (const n of ['store', 'libp2p', 'acl', 'delivery']) lc.add(n, r.service(n))
    await Promise.all([lc.start(), lc.start()])
    await lc.start()
    assert.deepEqual(r.events, ['start store', 'start libp2p', 'start acl', 'start delivery'])
    await Promise.all([lc.stop(), lc.stop()])
    await lc.stop()
    assert.deepEqual(r.events.slice(4), ['stop delivery', 'stop acl', 'stop libp2p', 'stop store'])
  })

  it('a second start starts only the services added since the first', async () => {
    const r = recorder()
    const lc = new Lifecycle(log)
    lc.add('store', r.service('store'))
    await lc.start()
    lc.add('control', r.service('control'))
    await lc.start()
    await lc.stop()
    assert.deepEqual(r.events, ['start store', 'start control', 'stop control', 'stop store'])
  })

  it('a failing start stops the started services and the failed one, in reverse, and never starts the rest', async () => {
    const r = recorder()
    const lc = new Lifecycle(log)
    lc.add('store', r.service('store'))
    lc.add('acl', r.service('acl', true))
    lc.add('delivery', r.service('delivery'))
    await assert.rejects(lc.start(), /acl failed/)
    assert.deepEqual(r.events, ['start store', 'start acl', 'stop acl', 'stop store'])
  })

  it('a failing stop is logged and the others still stop', async () => {
    const events: string[] = []
    const lc = new Lifecycle(log)
    lc.add('store', { stop: () => { events.push('stop store') } })
    lc.add('delivery', { stop: () => { throw new Error('stuck') } })
    await lc.start()
    await lc.stop()
    assert.deepEqual(events, ['stop store'])
    assert.ok(logs.some((l) => l === 'stopping delivery: stuck'), logs.join('\n'))
  })
})
