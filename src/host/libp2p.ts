import { gossipsub } from '@chainsafe/libp2p-gossipsub'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { autoNAT } from '@libp2p/autonat'
import { bootstrap } from '@libp2p/bootstrap'
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { dcutr } from '@libp2p/dcutr'
import { identify } from '@libp2p/identify'
import { kadDHT, passthroughMapper, type KadDHTInit, type Selectors, type Validators } from '@libp2p/kad-dht'
import { mdns } from '@libp2p/mdns'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import type { PrivateKey } from '@libp2p/interface'
import { createLibp2p, type Libp2p, type Libp2pOptions as CreateOptions } from 'libp2p'
import { announceFilter } from '../discovery/addrs.js'
import { lanOnly } from '../discovery/mdns-filter.js'
import { ameshSelectors, ameshValidators } from '../discovery/records.js'
import { SelectingDatastore } from '../discovery/record-store.js'
import { DHT_PROTOCOL } from '../discovery/dht-records.js'
import type { Logger } from '../util/log.js'
import { defaultRelayConfig, type RelayConfig } from './config.js'
import { ReservationPolicy, relayClient, relayServerInit } from './relay.js'

export { DHT_PROTOCOL }
/** mDNS service name: amesh hosts find each other, not every libp2p program on the LAN. */
export const MDNS_SERVICE_TAG = '_amesh._udp.local'
/** How often mDNS queries the LAN, ms. */
export const MDNS_INTERVAL = 2000

export interface Libp2pOptions {
  privateKey: PrivateKey
  listen: string[]
  peers: string[]
  mdns: boolean
  /** DHT record validators; default: amesh's (signed cards and name claims) */
  validators?: Validators
  /** DHT record selectors; default: amesh's (newest card, largest claim set) */
  selectors?: Selectors
  /** circuit relay: serve (opt-in), its limits and accept policy; default: not serving */
  relay?: RelayConfig
  /** who may reserve on this relay (default: the config's accept, `granted` refusing all until a check is set) */
  reservationPolicy?: ReservationPolicy
  /** the host's log, for reservations made and refused */
  log?: Logger
  /** the transports (default: TCP); the simulation's in-memory transport (bench/sim) */
  transports?: CreateOptions['transports']
  /** libp2p's connection monitor (default: a ping every CONNECTION_PING_INTERVAL, libp2p's timeouts); the simulation's are longer */
  connectionMonitor?: CreateOptions['connectionMonitor']
  /** how long the DHT waits for a new or old contact's ping, and for a connected peer's addition (the same ping), before it leaves it out of its routing table (default: kad-dht's: pings at least 5 s, the addition 10 s); the simulation's are longer */
  dhtPings?: DhtPings
}

/** kad-dht's routing-table ping timeouts, and its bound on adding a connected peer (which includes that ping). */
export type DhtPings = Pick<KadDHTInit, 'pingNewContactTimeout' | 'pingOldContactTimeout' | 'onPeerConnectTimeout'>

type Discovery = ReturnType<typeof mdns> | ReturnType<typeof bootstrap>

function discoveries (opts: Libp2pOptions): Discovery[] {
  const list: Discovery[] = []
  if (opts.mdns) list.push(lanOnly(mdns({ interval: MDNS_INTERVAL, serviceTag: MDNS_SERVICE_TAG })))
  if (opts.peers.length > 0) list.push(bootstrap({ list: opts.peers, timeout: 100 }))
  return list
}

/** A reservation request must be answered within this, ms (libp2p's default, 2 s, fails on a loaded machine). */
export const RESERVATION_TIMEOUT = 10_000

/** How often libp2p's connection monitor pings each connection, ms (libp2p's default: 10 s). */
export const CONNECTION_PING_INTERVAL = 60_000

/** How often kad-dht re-tags the DHT peers closest to this host (keep-alive), ms (kad-dht's default: 5 s). */
export const CLOSEST_PEER_TAG_INTERVAL = 60_000

/**
 * kad-dht tags the 20 peers closest to this host (a keep-alive tag, so
 * libp2p reconnects them) on a 5 s timer that diffs two peer sets each time,
 * changed or not: a quarter of what an idle simulated host spent (0.064 of
 * 0.275 % of a core per host at 30 hosts, bench/sim/idle-steps.ts). The set
 * changes only when the routing table does; a new close peer is tagged up to
 * a minute later instead of 5 s. kad-dht 15 does not pass the interval
 * through its init, so it is set on its tagger before libp2p starts; if
 * kad-dht has no such tagger, nothing is changed.
 */
function slowerCloseTagging (libp2p: Libp2p): void {
  const dht = (libp2p.services as { dht?: { routingTable?: { closestPeerTagger?: { refreshInterval?: number } } } }).dht
  const tagger = dht?.routingTable?.closestPeerTagger
  if (tagger !== undefined && typeof tagger.refreshInterval === 'number') tagger.refreshInterval = CLOSEST_PEER_TAG_INTERVAL
}

/**
 * The host's libp2p peer: TCP + Noise + Yamux, identify, ping, amesh's own
 * Kademlia DHT (server mode, private addresses kept, amesh record validators
 * and selectors), gossipsub, mDNS and bootstrap; circuit relay v2 (dial and
 * accept relayed connections, reserve on relays when not publicly reachable,
 * serve as a relay when configured), AutoNAT and DCUtR. Loopback addresses are not
 * announced when the host has others. Limits are raised for a local mesh where
 * many hosts connect at once.
 */
export async function buildLibp2p (opts: Libp2pOptions): Promise<Libp2p> {
  const relay = opts.relay ?? defaultRelayConfig()
  const policy = opts.reservationPolicy ?? new ReservationPolicy(relay.accept, opts.log)
  const log = opts.log ?? (() => {})
  const libp2p = await createLibp2p({
    start: false,
    privateKey: opts.privateKey,
    datastore: new SelectingDatastore(opts.selectors ?? ameshSelectors),
    addresses: { listen: opts.listen, announceFilter },
    // the relay transport dials and accepts relayed connections; reservations
    // are asked for by the relay client service (relay.ts), one at a time
    transports: [...(opts.transports ?? [tcp()]), circuitRelayTransport({ reservationConcurrency: 1, reservationCompletionTimeout: RESERVATION_TIMEOUT })],
    connectionGater: { denyInboundRelayReservation: (peer) => policy.deny(peer) },
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    peerDiscovery: discoveries(opts),
    connectionManager: {
      maxConnections: 1000,
      inboundConnectionThreshold: 1000,
      maxIncomingPendingConnections: 500,
      maxParallelDials: 100,
      dialTimeout: 10_000
    },
    // libp2p pings every connection every 10 s by default: a new stream, a
    // protocol negotiation and a peer-store write on both ends, which in a
    // formed mesh of 30 hosts was most of what an idle daemon did. Yamux
    // keep-alive already probes each connection every 30 s without a stream;
    // the monitor stays on (it measures round trips and closes dead
    // connections), just less often.
    connectionMonitor: opts.connectionMonitor ?? { pingInterval: CONNECTION_PING_INTERVAL },
    services: {
      identify: identify(),
      ping: ping({ maxInboundStreams: 256, maxOutboundStreams: 256 }),
      dht: kadDHT({
        protocol: DHT_PROTOCOL,
        clientMode: false,
        peerInfoMapper: passthroughMapper,
        validators: opts.validators ?? ameshValidators,
        selectors: opts.selectors ?? ameshSelectors,
        allowQueryWithZeroPeers: true,
        ...opts.dhtPings
      }),
      pubsub: gossipsub({ allowPublishToZeroTopicPeers: true, emitSelf: false, runOnLimitedConnection: true }),
      autonat: autoNAT(),
      dcutr: dcutr(),
      relayClient: relayClient({ serving: relay.serve, log, retry: relay.retry }),
      ...(relay.serve ? { relay: circuitRelayServer(relayServerInit(relay)) } : {})
    }
  })
  slowerCloseTagging(libp2p)
  await libp2p.start()
  return libp2p
}
