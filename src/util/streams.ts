// Protocol streams that also run over relayed connections. libp2p refuses a
// stream on a limited (relayed) connection unless the protocol opts in
// (`runOnLimitedConnection`), and `dialProtocol` dials the peer anew whenever
// its only connections are limited — through the relay again, a second
// circuit for every call. Here an open limited connection is reused when no
// unlimited one exists, unless it is spent (its relay is about to cut it for
// its data or duration limit): then a fresh circuit is dialled.
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'
import { SECOND } from './time.js'

export interface OpenStreamOptions { signal?: AbortSignal, maxOutboundStreams?: number }

/** Handler options every amesh protocol registers with: it runs over relayed connections too. */
export const ON_LIMITED = { runOnLimitedConnection: true } as const

/** A limited connection with fewer bytes than this left is spent: new streams go over a fresh circuit. */
export const SPENT_BYTES = 32 * 1024
/** ...or with less time than this left (or a quarter of its whole duration, when that is shorter). */
export const SPENT_TIME = 5 * SECOND

type Limited = Pick<Connection, 'limits' | 'timeline'>

/** What a limited connection has left before its relay cuts it (undefined: not limited). */
export function circuitLeft (c: Pick<Connection, 'limits'>): { bytes?: number, ms?: number } | undefined {
  const limits = c.limits
  if (limits == null) return undefined
  return {
    ...(limits.bytes != null ? { bytes: Number(limits.bytes) } : {}),
    ...(limits.seconds != null ? { ms: limits.seconds * SECOND } : {})
  }
}

/** Time left below which a limited connection is spent: SPENT_TIME, or a quarter of its whole duration. */
export function spentTime (c: Limited, now = Date.now()): number {
  const ms = circuitLeft(c)?.ms
  if (ms === undefined) return 0
  return Math.min(SPENT_TIME, (ms + Math.max(0, now - c.timeline.open)) / 4)
}

/** Whether a limited connection is about to reach its relay's data or duration limit. */
export function isSpent (c: Limited, now = Date.now()): boolean {
  const left = circuitLeft(c)
  if (left === undefined) return false
  return (left.bytes !== undefined && left.bytes < SPENT_BYTES) || (left.ms !== undefined && left.ms < spentTime(c, now))
}

/**
 * An open connection to `peer` to reuse: an unlimited one, else the relayed
 * one with the most left that is not spent. Without one, a new dial is
 * `force`d when spent or closing relayed connections exist, so libp2p neither
 * hands one of those back nor drops the new circuit as a duplicate of the old
 * one's address (with only direct ones, libp2p's dial decides, as before).
 */
export function reusable (libp2p: Pick<Libp2p, 'getConnections'>, peer: PeerId): { connection?: Connection, force: boolean } {
  const all = libp2p.getConnections(peer)
  const open = all.filter((c) => c.status === 'open')
  const direct = open.find((c) => c.limits == null)
  if (direct !== undefined) return { connection: direct, force: false }
  const fresh = open.filter((c) => !isSpent(c)).sort((a, b) => roomOf(b) - roomOf(a))
  return { connection: fresh[0], force: fresh.length === 0 && all.some((c) => c.limits != null) }
}

/** The bytes a limited connection has left (unbounded: the largest number). */
function roomOf (c: Pick<Connection, 'limits'>): number {
  return circuitLeft(c)?.bytes ?? Number.MAX_SAFE_INTEGER
}

/** An open connection to `peer` (unlimited preferred, a relayed one that is not spent when that is all), else a new dial. */
export async function connectionTo (libp2p: Pick<Libp2p, 'getConnections' | 'dial'>, peer: PeerId, opts: { signal?: AbortSignal } = {}): Promise<Connection> {
  const { connection, force } = reusable(libp2p, peer)
  return connection ?? await libp2p.dial(peer, { ...opts, ...(force ? { force } : {}) })
}

/** A stream of `protocol` to `peer` and the connection it runs on (relayed when that is all there is). */
export async function openStreamOn (libp2p: Pick<Libp2p, 'getConnections' | 'dial'>, peer: PeerId, protocol: string, opts: OpenStreamOptions = {}): Promise<{ stream: Stream, connection: Connection }> {
  const connection = await connectionTo(libp2p, peer, { signal: opts.signal })
  return { stream: await connection.newStream(protocol, { ...opts, ...ON_LIMITED }), connection }
}

/** A stream of `protocol` to `peer`, over a relayed connection when that is all there is. */
export async function openStream (libp2p: Pick<Libp2p, 'getConnections' | 'dialProtocol'>, peer: PeerId, protocol: string, opts: OpenStreamOptions = {}): Promise<Stream> {
  const { connection, force } = reusable(libp2p, peer)
  if (connection !== undefined) return await connection.newStream(protocol, { ...opts, ...ON_LIMITED })
  return await libp2p.dialProtocol(peer, protocol, { ...opts, ...ON_LIMITED, ...(force ? { force } : {}) })
}

/** Whether a connection is relayed (limited by the relay or through a /p2p-circuit address). */
export function isRelayed (c: Pick<Connection, 'limits' | 'remoteAddr'>): boolean {
  return c.limits != null || c.remoteAddr.toString().includes('/p2p-circuit')
}
