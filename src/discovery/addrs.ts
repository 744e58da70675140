// Which addresses a host announces to others and which discovered addresses
// it dials. A loopback address only ever reaches the machine it is used on, so
// a host that has any other address never announces its loopback addresses,
// and addresses learnt from other hosts (cards, mDNS) are dialled without their
// loopback ones. A host that listens on loopback only (tests, or a host reached
// through an SSH tunnel) keeps announcing its loopback addresses: on one
// machine they are the only way in.

import type { Multiaddr } from '@multiformats/multiaddr'
import { multiaddr } from '@multiformats/multiaddr'

/** True for 127.0.0.0/8 and ::1 (also inside /ip6 forms of v4-mapped loopback). */
export function isLoopback (ma: Multiaddr | string): boolean {
  const text = typeof ma === 'string' ? ma : ma.toString()
  return /^\/ip4\/127\.\d+\.\d+\.\d+(\/|$)/.test(text) || /^\/ip6\/(::1|0:0:0:0:0:0:0:1|::ffff:127\.\d+\.\d+\.\d+)(\/|$)/i.test(text) ||
    /^\/dns[46]?\/localhost(\/|$)/.test(text)
}

/**
 * libp2p `addresses.announceFilter`: drop loopback addresses when there is
 * any other address to announce, keep them when they are all there is.
 */
export function announceFilter (addrs: Multiaddr[]): Multiaddr[] {
  const other = addrs.filter((a) => !isLoopback(a))
  return other.length > 0 ? other : addrs
}

/**
 * The addresses worth dialling from this host among those another host
 * announced: its loopback addresses only when this host is itself
 * loopback-only (then both live on one machine, as in local tests).
 */
export function dialableFrom (localAddrs: readonly Multiaddr[], remote: readonly string[]): Multiaddr[] {
  const localOnly = localAddrs.length > 0 && localAddrs.every((a) => isLoopback(a))
  const out: Multiaddr[] = []
  for (const text of remote) {
    try {
      const ma = multiaddr(text)
      if (localOnly || !isLoopback(ma)) out.push(ma)
    } catch {
      // a malformed address in a card is skipped
    }
  }
  return out
}

/** Strip a trailing /p2p/<id> so an address can be merged into the peer store. */
export function withoutPeerId (ma: Multiaddr): Multiaddr {
  return ma.getPeerId() === null ? ma : ma.decapsulateCode(421)
}
