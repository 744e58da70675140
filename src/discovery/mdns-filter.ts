// mDNS answers come from other machines on the LAN, so the loopback
// addresses in them lead back to this machine, never to the peer that sent
// them. This wraps a peer-discovery service and drops those addresses before
// libp2p stores or dials them; a peer with nothing else is not reported.

import { peerDiscoverySymbol, serviceCapabilities, type PeerDiscovery, type PeerDiscoveryEvents, type PeerInfo, type Startable } from '@libp2p/interface'
import { TypedEventEmitter } from 'main-event'
import { isLoopback } from './addrs.js'

type Factory<C> = (components: C) => PeerDiscovery

class LanOnlyDiscovery extends TypedEventEmitter<PeerDiscoveryEvents> implements PeerDiscovery, Startable {
  readonly [peerDiscoverySymbol] = this
  readonly [Symbol.toStringTag] = '@amesh/lan-only-discovery'
  readonly [serviceCapabilities]: string[] = ['@libp2p/peer-discovery']

  constructor (private readonly inner: PeerDiscovery) {
    super()
    inner.addEventListener('peer', (evt) => { this.forward(evt.detail) })
  }

  private forward (peer: PeerInfo): void {
    const multiaddrs = peer.multiaddrs.filter((ma) => !isLoopback(ma))
    if (multiaddrs.length === 0) return
    this.safeDispatchEvent('peer', { detail: { ...peer, multiaddrs } })
  }

  async start (): Promise<void> {
    await (this.inner as Partial<Startable>).start?.()
  }

  async stop (): Promise<void> {
    await (this.inner as Partial<Startable>).stop?.()
  }
}

/** Wrap a peer-discovery factory so that loopback addresses never come out of it. */
export function lanOnly<C> (factory: Factory<C>): Factory<C> {
  return (components: C) => new LanOnlyDiscovery(factory(components))
}
