// Protocol streams that also run over relayed connections. libp2p refuses a
// stream on a limited (relayed) connection unless the protocol opts in
// (`runOnLimitedConnection`), and `dialProtocol` dials the peer anew whenever
// its only connections are limited — through the relay again, a second
// circuit for every call. Here an open limited connection is reused when no
// unlimited one exists; otherwise this is `dialProtocol`, as before.
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'

export interface OpenStreamOptions { signal?: AbortSignal, maxOutboundStreams?: number }

/** Handler options every amesh protocol registers with: it runs over relayed connections too. */
export const ON_LIMITED = { runOnLimitedConnection: true } as const

/** A stream of `protocol` to `peer`, over a relayed connection when that is all there is. */
export async function openStream (libp2p: Pick<Libp2p, 'getConnections' | 'dialProtocol'>, peer: PeerId, protocol: string, opts: OpenStreamOptions = {}): Promise<Stream> {
  const open = libp2p.getConnections(peer).filter((c) => c.status === 'open')
  const limited = open.some((c) => c.limits == null) ? undefined : open[0]
  if (limited !== undefined) return await limited.newStream(protocol, { ...opts, ...ON_LIMITED })
  return await libp2p.dialProtocol(peer, protocol, { ...opts, ...ON_LIMITED })
}

/** Whether a connection is relayed (limited by the relay or through a /p2p-circuit address). */
export function isRelayed (c: Pick<Connection, 'limits' | 'remoteAddr'>): boolean {
  return c.limits != null || c.remoteAddr.toString().includes('/p2p-circuit')
}

/** An open connection to `peer` (unlimited preferred, a relayed one when that is all), else a new dial. */
export async function connectionTo (libp2p: Pick<Libp2p, 'getConnections' | 'dial'>, peer: PeerId, opts: { signal?: AbortSignal } = {}): Promise<Connection> {
  const open = libp2p.getConnections(peer).filter((c) => c.status === 'open')
  return open.find((c) => c.limits == null) ?? open[0] ?? await libp2p.dial(peer, opts)
}
