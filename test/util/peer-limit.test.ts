import { strict as assert } from 'node:assert'
import { PeerLimiter } from '../../src/util/peer-limit.js'
import { CardQuota } from '../../src/discovery/card-quota.js'

describe('peer limits - throttle, then disconnect', () => {
  it('peer-limit - within budget is ok; over it throttles; sending while throttled disconnects', () => {
    const l = new PeerLimiter({ budget: 3, window: 1000, throttleFor: 500 })
    assert.deepEqual([1, 2, 3].map(() => l.spend('p', 1, 0)), ['ok', 'ok', 'ok'])
    assert.equal(l.spend('p', 1, 10), 'throttled')
    assert.equal(l.isThrottled('p', 20), true)
    assert.equal(l.spend('q', 1, 20), 'ok', 'another peer is not affected')
    assert.equal(l.spend('p', 1, 30), 'disconnect')
  })

  it('peer-limit - a quiet stretch forgives a strike and a new window restores the budget', () => {
    const l = new PeerLimiter({ budget: 1, window: 1000, throttleFor: 500 })
    assert.equal(l.spend('p', 2, 0), 'throttled')
    assert.equal(l.isThrottled('p', 600), false)
    assert.equal(l.spend('p', 1, 2000), 'ok')
    assert.equal(l.spend('p', 1, 2001), 'throttled', 'a fresh first strike, not a disconnect')
  })

  it('peer-limit - the peer table is bounded', () => {
    const l = new PeerLimiter({ budget: 0, maxPeers: 2, throttleFor: 500 })
    l.strike('a', 0); l.strike('b', 0); l.strike('c', 0)
    assert.equal(l.isThrottled('a', 1), false, 'the oldest peer was forgotten')
    assert.equal(l.isThrottled('c', 1), true)
  })

  it('card-quota - counts per host and refuses past the limit', () => {
    const q = new CardQuota(2)
    q.add('h'); q.add('h')
    assert.throws(() => q.check('h'), { name: 'CardQuotaError' })
    q.check('other')
    q.remove('h')
    q.check('h')
  })
})
