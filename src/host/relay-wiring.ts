// The relay's accept policy and status, wired from the host's components.
import type { CircuitRelayService } from '@libp2p/circuit-relay-v2'
import type { Libp2p } from '@libp2p/interface'
import { commandCovers, decodeToken } from '../acl/index.js'
import type { AclService } from '../authz/acl-service.js'
import type { Directory } from '../discovery/directory.js'
import type { HostConfig } from './config.js'
import type { RelayStatus } from '../control/wire.js'
import type { RelayClient } from './relay.js'
import { isRelayed } from '../util/streams.js'

/** The command a host grant must cover for its audience's host to reserve on this relay. */
export const RELAY_RESERVE_CMD = '/relay/reserve'

/**
 * `relay.accept: granted`: a peer may reserve when one of its nodes (by its
 * signed card) holds a live, unrevoked host grant of /relay/reserve issued
 * here (`amesh grant --host --to NODE --cmd /relay/reserve`).
 */
export function grantedReservations (acl: Pick<AclService, 'store'>, directory: Pick<Directory, 'get'>): (peer: string) => boolean {
  return (peer) => {
    const now = Date.now()
    return acl.store.allIssued().some((r) => {
      if (r.exp <= now || r.iss !== r.sub || acl.store.revocationsOf(r.id).length > 0) return false
      const cmd = decodeToken(r.chain[0]).payload.cmd
      return typeof cmd === 'string' && commandCovers(cmd, RELAY_RESERVE_CMD) && directory.get(r.aud)?.hostPeerId === peer
    })
  }
}

/** What `amesh status` shows under `relay`. */
export function relayStatus (libp2p: Libp2p, config: HostConfig): RelayStatus | undefined {
  const services = libp2p.services as { relayClient?: RelayClient, relay?: CircuitRelayService }
  const client = services.relayClient
  if (client === undefined) return undefined
  const out: RelayStatus = { ...client.status(), connections: connections(libp2p), hole_punching: HOLE_PUNCHING }
  const server = services.relay
  if (server !== undefined) {
    const { relay } = config
    out.serving = {
      accept: relay.accept,
      max_reservations: relay.maxReservations,
      limits: { duration_ms: relay.durationLimit, data_bytes: relay.dataLimit },
      reservations: [...server.reservations.entries()].map(([peer, r]) => ({ peer: peer.toString(), expires: r.expiry.toISOString() }))
    }
  }
  return out
}

/** What status says of DCUtR: it is tried, and from Node.js it is expected to fail (no SO_REUSEPORT on the TCP transport). */
export const HOLE_PUNCHING = 'DCUtR is tried on each relayed connection; from Node.js it is expected to fail (libp2p interop: no SO_REUSEPORT), and the connection then stays relayed'

function connections (libp2p: Libp2p): RelayStatus['connections'] {
  const byPeer = new Map<string, RelayStatus['connections'][number]>()
  for (const c of libp2p.getConnections()) {
    const peer = c.remotePeer.toString()
    const relayed = isRelayed(c)
    const seen = byPeer.get(peer)
    if (seen !== undefined && seen.via === 'direct') continue
    byPeer.set(peer, relayed ? { peer, via: 'relayed', relay: /\/p2p\/([^/]+)\/p2p-circuit/.exec(c.remoteAddr.toString())?.[1] } : { peer, via: 'direct' })
  }
  return [...byPeer.values()]
}
