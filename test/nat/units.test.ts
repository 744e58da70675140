// Pure parts of the relay support: config parsing, refusal reasons, private ranges, listen addresses.
import { strict as assert } from 'node:assert'
import { multiaddr } from '@multiformats/multiaddr'
import { defaultRelayConfig, defaultRelayRetry, parseConfig, RELAY_DATA_LIMIT, RELAY_DURATION_LIMIT } from '../../src/host/config.js'
import { hostOf, isPrivateHost } from '../../src/host/reachability.js'
import { refusalReason, relayListenAddr, relayServerInit } from '../../src/host/relay.js'

const RELAY = '12D3KooWCSJbNk27tsYZNCfZ5Kj9Lm8Nvqpz8naRAhBj8kfGGLha'

describe('nat - relay config and helpers', () => {
  it('config - relay defaults: not serving, accept any, raised bounded limits', () => {
    const cfg = parseConfig('')
    assert.deepEqual(cfg.relay, defaultRelayConfig())
    assert.equal(cfg.relay.serve, false)
    assert.equal(cfg.relay.accept, 'any')
    assert.equal(cfg.relay.durationLimit, RELAY_DURATION_LIMIT)
    assert.equal(cfg.relay.dataLimit, RELAY_DATA_LIMIT)
    assert.deepEqual(cfg.relays, [])
  })

  it('config - relay: serve, max_reservations, limits (durations and bytes), accept; relays', () => {
    const cfg = parseConfig(`relay: {serve: true, max_reservations: 8, limits: {duration: 15s, data: 1048576}, accept: granted}\nrelays: ["/ip4/198.18.0.100/tcp/4001/p2p/${RELAY}"]\n`)
    assert.deepEqual(cfg.relay, { serve: true, maxReservations: 8, durationLimit: 15_000, dataLimit: 1048576, accept: 'granted', retry: defaultRelayRetry() })
    assert.deepEqual(cfg.relays, [`/ip4/198.18.0.100/tcp/4001/p2p/${RELAY}`])
    assert.equal(parseConfig('relay: {limits: {duration: 2h}}').relay.durationLimit, 2 * 3600_000)
    assert.equal(parseConfig('relay: {limits: {duration: 90000}}').relay.durationLimit, 90_000)
    const init = relayServerInit(cfg.relay)
    assert.deepEqual(init.reservations, { maxReservations: 8, applyDefaultLimit: true, defaultDurationLimit: 15_000, defaultDataLimit: 1048576n })
  })

  it('config - relay.retry defaults: refused 30 s doubling to 2 min, failed 5 s, check 5 s, redial 5 s doubling to 1 min', () => {
    assert.deepEqual(parseConfig('').relay.retry, { refused: 30_000, refusedMax: 120_000, failed: 5_000, check: 5_000, redial: 5_000, redialMax: 60_000 })
    assert.deepEqual(defaultRelayRetry(), parseConfig('relay: {serve: true}').relay.retry)
  })

  it('config - relay.retry: durations or ms, each key on its own over the defaults', () => {
    const all = parseConfig('relay: {retry: {refused: 2s, refused_max: 8s, failed: 500ms, check: 1s, redial: 750, redial_max: 0.5m}}').relay.retry
    assert.deepEqual(all, { refused: 2_000, refusedMax: 8_000, failed: 500, check: 1_000, redial: 750, redialMax: 30_000 })
    assert.deepEqual(parseConfig('relay: {retry: {failed: 1s}}').relay.retry, { ...defaultRelayRetry(), failed: 1_000 })
    assert.deepEqual(parseConfig('relay: {retry: {}}').relay.retry, defaultRelayRetry())
    assert.deepEqual(parseConfig('relay: {retry: {refused: 100ms, refused_max: 100ms}}').relay.retry, { ...defaultRelayRetry(), refused: 100, refusedMax: 100 })
  })

  it('config - bad relay settings are named errors', () => {
    const bad: Array<[string, RegExp]> = [
      ['relay: true', /relay must be a map/],
      ['relay: {serve: yes please}', /relay.serve must be true or false/],
      ['relay: {accept: everyone}', /relay.accept must be one of any, granted/],
      ['relay: {limits: {duration: soon}}', /relay.limits.duration must be a duration/],
      ['relay: {limits: {duration: 10ms}}', /at least 1s and 65536 bytes/],
      ['relay: {limits: {data: 10}}', /at least 1s and 65536 bytes/],
      ['relay: {limits: {speed: 1}}', /unknown key "relay.limits.speed"/],
      ['relay: {serv: true}', /unknown key "relay.serv"/],
      ['relay: {retry: 5s}', /relay.retry must be a map \{refused, refused_max, failed, check, redial, redial_max\}/],
      ['relay: {retry: [1, 2]}', /relay.retry must be a map/],
      ['relay: {retry: {refuse: 1s}}', /unknown key "relay.retry.refuse"/],
      ['relay: {retry: {refused: soon}}', /relay.retry.refused must be a duration such as 15s/],
      ['relay: {retry: {failed: -5}}', /relay.retry.failed must be a duration/],
      ['relay: {retry: {check: 50ms}}', /relay.retry.check must be at least 100ms \(got 50ms\)/],
      ['relay: {retry: {redial: 0}}', /relay.retry.redial must be at least 100ms/],
      ['relay: {retry: {refused: 1m, refused_max: 30s}}', /relay.retry.refused_max must not be shorter than relay.retry.refused/],
      ['relay: {retry: {redial_max: 1s}}', /relay.retry.redial_max must not be shorter than relay.retry.redial/],
      ['relays: "/ip4/1.2.3.4/tcp/1"', /relays must be a list of strings/]
    ]
    for (const [text, err] of bad) assert.throws(() => parseConfig(text), (e: Error) => e.name === 'ConfigError' && err.test(e.message), text)
  })

  it('reachability - private ranges; relayed addresses have no host of their own', () => {
    for (const h of ['10.77.1.2', '192.168.1.1', '172.16.0.1', '172.31.255.255', '127.0.0.1', '169.254.1.1', '100.64.0.1', '::1', 'fe80::1', 'fd00::1']) assert.equal(isPrivateHost(h), true, h)
    for (const h of ['198.18.0.100', '8.8.8.8', '172.32.0.1', '2001:db8::1']) assert.equal(isPrivateHost(h), false, h)
    assert.equal(hostOf(multiaddr('/ip4/198.18.0.1/tcp/4001')), '198.18.0.1')
    assert.equal(hostOf(multiaddr(`/ip4/198.18.0.100/tcp/4001/p2p/${RELAY}/p2p-circuit`)), undefined)
  })

  it('relay client - refusal reasons name the cause and what the operator can do', () => {
    const wrap = (inner: string): Error => new Error(`Some configured addresses failed to be listened on, you may need…:\n\n  /ip4/1.2.3.4/tcp/1/p2p-circuit: Error: ${inner}\n    at x`)
    const denied = refusalReason(wrap('reservation failed with status PERMISSION_DENIED'))
    assert.equal(denied.refused, true)
    assert.match(denied.reason, /^PERMISSION_DENIED: .*amesh grant --host --to NODE --cmd \/relay\/reserve/)
    assert.match(refusalReason(wrap('reservation failed with status RESERVATION_REFUSED')).reason, /relay.max_reservations/)
    const other = refusalReason(new Error('Some configured addresses failed:\n\n  /x: TimeoutError: The operation was aborted\n  at y'))
    assert.deepEqual(other, { refused: false, reason: 'TimeoutError: The operation was aborted' })
  })

  it('relay client - listens through one relay by its own address', () => {
    assert.equal(relayListenAddr(multiaddr(`/ip4/198.18.0.100/tcp/4001/p2p/${RELAY}`), RELAY).toString(), `/ip4/198.18.0.100/tcp/4001/p2p/${RELAY}/p2p-circuit`)
    assert.equal(relayListenAddr(multiaddr('/ip4/198.18.0.100/tcp/4001'), RELAY).toString(), `/ip4/198.18.0.100/tcp/4001/p2p/${RELAY}/p2p-circuit`)
  })
})
