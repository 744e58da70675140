import { strict as assert } from 'node:assert'
import { multiaddr } from '@multiformats/multiaddr'
import { Key } from 'interface-datastore'
import { announceFilter, dialableFrom, isLoopback } from '../../src/discovery/addrs.js'
import { buildCard, signCard } from '../../src/discovery/card.js'
import { SelectingDatastore, decodeDhtRecord } from '../../src/discovery/record-store.js'
import { encodeCardRecord, recordKey } from '../../src/discovery/records.js'
import { parseSshTarget, shellQuote } from '../../src/discovery/ssh.js'
import { generateNodeKey } from '../../src/identity/node-key.js'

const HOST = '12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq'

/** A serialized libp2p Record: field 1 key, field 2 value, field 5 timeReceived. */
function dhtRecord (key: Uint8Array, value: Uint8Array): Uint8Array {
  const field = (n: number, bytes: Uint8Array): number[] => {
    const len: number[] = []
    let l = bytes.length
    while (l > 127) { len.push((l & 0x7f) | 0x80); l >>>= 7 }
    len.push(l)
    return [(n << 3) | 2, ...len, ...bytes]
  }
  return new Uint8Array([...field(1, key), ...field(2, value), ...field(5, new TextEncoder().encode('2024-01-01T00:00:00Z'))])
}

describe('discovery - addresses, record store, ssh targets', () => {
  it('addrs - loopback is not announced when there is anything else; kept when alone', () => {
    const lo = multiaddr('/ip4/127.0.0.1/tcp/4747')
    const lan = multiaddr('/ip4/10.1.0.2/tcp/4747')
    assert.deepEqual(announceFilter([lo, lan]).map(String), [lan.toString()])
    assert.deepEqual(announceFilter([lo]).map(String), [lo.toString()])
    assert.ok(isLoopback('/ip6/::1/tcp/1') && isLoopback('/ip4/127.9.9.9/tcp/1') && !isLoopback('/ip4/10.0.0.1/tcp/1'))
  })

  it('addrs - a LAN host does not dial another host\'s loopback; a loopback-only host does', () => {
    const remote = ['/ip4/127.0.0.1/tcp/5000', '/ip4/10.1.0.3/tcp/4747', 'garbage']
    assert.deepEqual(dialableFrom([multiaddr('/ip4/10.1.0.2/tcp/4747')], remote).map(String), ['/ip4/10.1.0.3/tcp/4747'])
    assert.deepEqual(dialableFrom([multiaddr('/ip4/127.0.0.1/tcp/4000')], remote).map(String), remote.slice(0, 2))
  })

  it('record store - a replayed older card does not overwrite a newer one; a newer one does', async () => {
    const k = generateNodeKey()
    const now = Date.now()
    const card = (issuedAt: number): Uint8Array => encodeCardRecord(signCard(buildCard({ nodeId: k.id, name: 'n', kind: 'external', hostPeerId: HOST, hostAddrs: [], issuedAt, expiresAt: issuedAt + 3_600_000 }), k))
    const rk = recordKey(k.id)
    const [older, newer, newest] = [card(now - 2000), card(now - 1000), card(now)]
    assert.deepEqual(decodeDhtRecord(dhtRecord(rk, older))?.value, older)
    const ds = new SelectingDatastore()
    const key = new Key('/dht/record/abc')
    await ds.put(key, dhtRecord(rk, newer))
    await ds.put(key, dhtRecord(rk, older))
    assert.deepEqual(decodeDhtRecord(await ds.get(key))?.value, newer)
    await ds.put(key, dhtRecord(rk, newest))
    assert.deepEqual(decodeDhtRecord(await ds.get(key))?.value, newest)
    // other keys are stored as given
    await ds.put(new Key('/peers/x'), new Uint8Array([1]))
    await ds.put(new Key('/peers/x'), new Uint8Array([2]))
    assert.deepEqual(await ds.get(new Key('/peers/x')), new Uint8Array([2]))
  })

  it('ssh - targets parse as [USER@]HOST[:PORT]; bad ones are rejected', () => {
    assert.deepEqual(parseSshTarget('alice@box:2222'), { destination: 'alice@box', port: 2222 })
    assert.deepEqual(parseSshTarget('box'), { destination: 'box', port: undefined })
    assert.deepEqual(parseSshTarget('root@[::1]:22'), { destination: 'root@::1', port: 22 })
    for (const bad of ['-oProxyCommand=x', 'a b', 'box:0', 'box:99999', '']) assert.throws(() => parseSshTarget(bad), { name: 'InvalidArgumentError' }, bad)
    assert.equal(shellQuote("/tmp/it's here"), `'/tmp/it'\\''s here'`)
  })
})

describe('discovery - record store merges name claims', () => {
  it('record store - a second claimant\'s PUT keeps the first claim (collision stays visible)', async () => {
    const { signNameClaim, encodeNameRecord, nameKey, decodeNameRecord } = await import('../../src/discovery/records.js')
    const [x, y] = [generateNodeKey(), generateNodeKey()]
    const now = Date.now()
    const rec = (k: typeof x): Uint8Array => encodeNameRecord([signNameClaim({ name: 'twin', nodeId: k.id, hostPeerId: HOST, issuedAt: now, expiresAt: now + 60_000 }, k)])
    const ds = new SelectingDatastore()
    const key = new Key('/dht/record/twin')
    await ds.put(key, dhtRecord(nameKey('twin'), rec(x)))
    await ds.put(key, dhtRecord(nameKey('twin'), rec(y)))
    const held = decodeDhtRecord(await ds.get(key))
    assert.ok(held !== undefined)
    assert.deepEqual(decodeNameRecord(held.value).map((c) => c.nodeId).sort(), [x.id, y.id].sort())
  })
})
