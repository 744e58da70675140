// In-process amesh hosts on loopback for discovery tests: each a real Host
// (libp2p, LevelDB in a temp home) with discovery installed, mDNS off.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { KadDHT, Selectors, Validators } from '@libp2p/kad-dht'
import type { Datastore } from 'interface-datastore'
import type { Libp2p } from 'libp2p'
import { waitFor } from '../utils/hosts.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultConfig } from '../../src/host/config.js'
import { startHost as startAmeshHost, type RunningHost as Host } from '../../src/host/components.js'
import type { DiscoveryOptions } from '../../src/discovery/discovery.js'
import type { DiscoveryService } from '../../src/discovery/service.js'
import type { SshJoins } from '../../src/discovery/tunnels.js'

export const LOOPBACK_LISTEN = '/ip4/127.0.0.1/tcp/0'

export interface InstalledDiscovery { discovery: DiscoveryService, joins: SshJoins }

export interface TestHost { host: Host, parts: InstalledDiscovery, discovery: DiscoveryService, home: string, addr: string }

/** Start a host listening on loopback only, bootstrapped from `peers`. */
export async function startHost (peers: string[] = [], opts: DiscoveryOptions = {}): Promise<TestHost> {
  const home = mkdtempSync(join(tmpdir(), 'amd-'))
  writeFileSync(join(home, 'config.yaml'), `listen: ["${LOOPBACK_LISTEN}"]\nmdns: false\n`)
  const config = { ...defaultConfig(), listen: [LOOPBACK_LISTEN], peers, mdns: false, durability: 'none' as const }
  const host = await startAmeshHost({ home, config, logFile: join(home, 'amesh.log'), discovery: opts })
  const { discovery, joins } = host
  if (discovery === undefined || joins === undefined) throw new Error('discovery did not start')
  const parts = { discovery, joins }
  return { host, parts, discovery, home, addr: host.libp2p.getMultiaddrs()[0].toString() }
}

export async function stopHosts (hosts: TestHost[]): Promise<void> {
  await Promise.all(hosts.map(async (h) => {
    await h.host.stop().catch(() => {})
    rmSync(h.home, { recursive: true, force: true })
  }))
}

/** Poll until `check` returns a value other than undefined/false, or fail with `what` (the shared waitFor). */
export async function until<T> (what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeout = 15_000, every = 100): Promise<T> {
  return await waitFor(async () => await check(), timeout, what, every)
}

/** Number of peers in a host's DHT routing table. */
export function routingTableSize (h: TestHost): number {
  return (h.host.libp2p.services as unknown as { dht: { routingTable: { size: number } } }).dht.routingTable.size
}

/** A bare libp2p peer speaking amesh's DHT protocol, with the given validators, selectors and datastore. */
export async function startDhtPeer (opts: { validators: Validators, selectors: Selectors, datastore?: Datastore }): Promise<Libp2p<{ dht: KadDHT }>> {
  const [{ noise }, { yamux }, { identify }, { kadDHT, passthroughMapper }, { ping }, { tcp }, { createLibp2p }] = await Promise.all([
    import('@chainsafe/libp2p-noise'), import('@chainsafe/libp2p-yamux'), import('@libp2p/identify'),
    import('@libp2p/kad-dht'), import('@libp2p/ping'), import('@libp2p/tcp'), import('libp2p')
  ])
  return await createLibp2p({
    ...(opts.datastore !== undefined ? { datastore: opts.datastore } : {}),
    addresses: { listen: [LOOPBACK_LISTEN] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: {
      identify: identify(),
      ping: ping(),
      dht: kadDHT({ protocol: '/amesh/kad/1.0.0', clientMode: false, peerInfoMapper: passthroughMapper, validators: opts.validators, selectors: opts.selectors })
    }
  })
}

/** Run a DHT query to its end. */
export async function drain (events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events) { /* run the query */ } // eslint-disable-line @typescript-eslint/no-unused-vars
}
