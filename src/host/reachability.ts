// Whether this host can be dialled from outside: public, private (behind a
// NAT) or unknown. AutoNAT (libp2p's v1 on this line) confirms an observed
// public address only after 4 peers in different /8 networks dialled it back,
// and never tests private-range addresses, so on its own it rarely answers on
// a small mesh. amesh adds the plain evidence identify gives on every direct
// connection: the address a peer saw us connect from. When that is none of
// this host's own interface addresses, something between rewrote it — a NAT.
import { networkInterfaces } from 'node:os'
import type { IdentifyResult } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'

export type ReachabilityState = 'public' | 'private' | 'unknown'

/** IPv4 ranges that are not reachable from the internet (RFC 1918, loopback, link-local, CGNAT, this network). */
const PRIVATE_V4: Array<[number, number]> = [[0x0a000000, 8], [0x7f000000, 8], [0xa9fe0000, 16], [0xac100000, 12], [0xc0a80000, 16], [0x64400000, 10], [0, 8]]

function v4ToInt (host: string): number | undefined {
  const parts = host.split('.').map(Number)
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3]
}

/** True for an address no host outside this network can dial (IPv6: loopback, link-local, unique-local). */
export function isPrivateHost (host: string): boolean {
  const n = v4ToInt(host)
  if (n !== undefined) return PRIVATE_V4.some(([base, bits]) => (n >>> (32 - bits)) === (base >>> (32 - bits)))
  const h = host.toLowerCase()
  return h === '::1' || h.startsWith('fe80:') || h.startsWith('fc') || h.startsWith('fd') || h === '::'
}

/** The IP of a multiaddr (/ip4 or /ip6 first), if it has one; relayed addresses have none of their own. */
export function hostOf (ma: Multiaddr): string | undefined {
  if (ma.toString().includes('/p2p-circuit')) return undefined
  const c = ma.getComponents()[0]
  return c !== undefined && (c.name === 'ip4' || c.name === 'ip6') ? c.value : undefined
}

function ownHosts (): Set<string> {
  const out = new Set<string>()
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address)
  return out
}

export interface NatEvidence { observed: string, by: string, at: number }

/** Reachability from this host's announced addresses and what peers saw. */
export class Reachability {
  private evidence?: NatEvidence

  /** identify's answer on a direct connection: the address the peer saw this host as. */
  observe (result: IdentifyResult): void {
    if (result.connection.limits != null || result.observedAddr === undefined) return
    const host = hostOf(result.observedAddr)
    if (host === undefined || host === '127.0.0.1' || host === '::1') return
    if (ownHosts().has(host)) return
    this.evidence = { observed: result.observedAddr.toString(), by: result.peerId.toString(), at: Date.now() }
  }

  /** public: an announced direct address outside private ranges (an interface's, or one AutoNAT confirmed); private: a peer saw us behind a NAT. */
  state (announced: Multiaddr[]): ReachabilityState {
    if (announced.some((a) => { const h = hostOf(a); return h !== undefined && !isPrivateHost(h) })) return 'public'
    return this.evidence !== undefined ? 'private' : 'unknown'
  }

  get nat (): NatEvidence | undefined { return this.evidence }
}
