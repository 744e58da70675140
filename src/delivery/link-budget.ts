// A delivery link over a relayed (limited) connection: what it may still send
// before the relay cuts it, the fresh circuit it moves to, and its liveness
// ping over that very connection.
//
// A circuit relay v2 relay resets a limited connection once it has carried
// its data limit (both ways together) or lasted its duration limit; a frame that does not fit in what is left is cut mid-way, never
// acked, and resent from the head of the queue on the next circuit — where,
// if it is as large as the whole limit, it is cut again, for ever. So on a
// limited connection frames are sized from the limit, a frame is sent only
// when it fits in what is left (less a reserve for acks and the other
// protocols), and once the next one does not the link lets the frames in
// flight be acked and then moves to a fresh circuit itself (link.ts).
import { randomBytes } from 'node:crypto'
import type { Connection, Libp2p, PeerId } from '@libp2p/interface'
import { concat, equals } from 'uint8arrays'
import { circuitLeft, isSpent } from '../util/streams.js'
import { SECOND } from '../util/time.js'
import type { OutboxEntry } from '../store/outbox.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { DIAL_TIMEOUT, FRAME_BYTES, FRAME_PACKETS } from './constants.js'

/** The reserve is this share of what the connection had left when the link opened its stream... */
export const RESERVE_SHARE = 1 / 8
/** ...within these bounds, bytes. */
export const RESERVE_MIN = 16 * 1024
export const RESERVE_MAX = 1024 * 1024
/** At least this many frames fit in a fresh circuit (frames are cut smaller on a small limit). */
export const FRAMES_PER_CIRCUIT = 8
/** Frames are never cut smaller than this, bytes (a larger packet still travels, in a frame of its own). */
export const MIN_FRAME_BYTES = 4 * 1024
/** Noise and yamux add a few bytes per chunk on the wire: counted generously. */
const WIRE_OVERHEAD = 1.02
const WIRE_OVERHEAD_FIXED = 256

/** A ping stream on a relayed connection is closed gracefully within this, else aborted. */
export const CIRCUIT_CLOSE_TIMEOUT = 2 * SECOND

type Limited = Pick<Connection, 'limits' | 'timeline'>

export class LinkBudget {
  /** bytes of packets a frame on this connection carries at most */
  readonly frameBytes: number
  private readonly reserve: number
  /** what the connection had left when the stream opened (undefined: no data limit) */
  private readonly startBytes?: number
  /** wire bytes of the frames this link pushed since */
  private pushed = 0

  constructor (private readonly conn: Limited) {
    const start = circuitLeft(conn)?.bytes
    this.startBytes = start
    if (start === undefined) {
      this.reserve = 0
      this.frameBytes = FRAME_BYTES
      return
    }
    this.reserve = Math.min(RESERVE_MAX, Math.max(RESERVE_MIN, Math.floor(start * RESERVE_SHARE)))
    this.frameBytes = Math.min(FRAME_BYTES, Math.max(MIN_FRAME_BYTES, Math.floor((start - this.reserve) / FRAMES_PER_CIRCUIT)))
  }

  /** The budget of a stream on `conn`; undefined when the connection has no limits (direct). */
  static of (conn: Limited | undefined): LinkBudget | undefined {
    return conn === undefined || conn.limits == null ? undefined : new LinkBudget(conn)
  }

  /**
   * Bytes still free for frames: what the connection reports left, or what
   * was left at open less what this link pushed (some of it may not be
   * written, so not counted, yet), whichever is less; less the reserve.
   */
  bytesLeft (): number {
    if (this.startBytes === undefined) return Number.MAX_SAFE_INTEGER
    const live = circuitLeft(this.conn)?.bytes ?? 0
    return Math.min(live, this.startBytes - this.pushed) - this.reserve
  }

  /**
   * Whether a frame of `frameLength` bytes fits before the relay's limits; the
   * spend is counted when it does. The first frame on a stream is always sent
   * unless the connection is spent: it is at most a quarter of the circuit,
   * or one packet larger than the whole circuit, which no fresh circuit would
   * carry either (it is retried, and dead-lettered after its TTL).
   */
  take (frameLength: number, now = Date.now()): boolean {
    if (isSpent(this.conn, now)) return false
    const wire = Math.ceil(frameLength * WIRE_OVERHEAD) + WIRE_OVERHEAD_FIXED
    if (this.pushed > 0 && wire > this.bytesLeft()) return false
    this.pushed += wire
    return true
  }

  /** What is left, for the log. */
  describe (): string {
    const left = circuitLeft(this.conn)
    const parts = [left?.bytes !== undefined ? `${left.bytes} bytes` : undefined, left?.ms !== undefined ? `${Math.round(left.ms / 1000)} s` : undefined]
    return parts.filter((p) => p !== undefined).join(', ') + ' left'
  }
}

/**
 * Dial a fresh circuit to `peer` beside the spent one, while the frames in
 * flight on that one are acked (the dial through a relay takes several round
 * trips): the link's next stream then finds it open. `force`: libp2p would
 * otherwise hand back the spent connection, or drop the new one as its
 * duplicate (same circuit address).
 */
export function dialFreshCircuit (libp2p: Pick<Libp2p, 'dial'>, peer: PeerId, log: Logger): void {
  libp2p.dial(peer, { force: true, signal: AbortSignal.timeout(DIAL_TIMEOUT) }).catch((err: unknown) => { log(`link ${peer.toString()}: dialling a fresh circuit failed: ${errorMessage(err)}`) })
}

/**
 * End a relayed connection near its limits, at once: a graceful close keeps
 * it in libp2p's connection list while it waits for the remote, and a dial
 * of the same circuit address meanwhile is dropped as its duplicate.
 */
export function endCircuit (conn: Pick<Connection, 'abort'>): void {
  conn.abort(new Error('relayed connection near its relay limits: moving to a fresh circuit'))
}

/** The head of a list of entries that fits one frame (packets, and `maxBytes` of them unless one alone is larger). */
export function frameOf (entries: OutboxEntry[], maxBytes: number): OutboxEntry[] {
  let n = 0
  let bytes = 0
  while (n < entries.length && n < FRAME_PACKETS) {
    const size = entries[n].packet.byteLength
    if (n > 0 && bytes + size > maxBytes) break
    bytes += size
    n++
  }
  return n === entries.length ? entries : entries.slice(0, n)
}

/** libp2p's ping protocol (every amesh host runs its ping service, on relayed connections too). */
export const PING_PROTOCOL = '/ipfs/ping/1.0.0'
const PING_BYTES = 32

/**
 * A ping over this very connection. libp2p's ping service takes a peer and,
 * when all its connections are relayed, dials it anew through the relay (a
 * whole circuit per ping, which libp2p then drops as a duplicate); a relayed
 * link asks the connection it runs on instead.
 */
export async function pingOver (conn: Pick<Connection, 'newStream'>, signal: AbortSignal): Promise<void> {
  const stream = await conn.newStream(PING_PROTOCOL, { signal, runOnLimitedConnection: true })
  const onAbort = (): void => { stream.abort(new Error('ping timeout')) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    const data = randomBytes(PING_BYTES)
    void stream.sink([data]).catch(() => {})
    const got: Uint8Array[] = []
    let n = 0
    for await (const chunk of stream.source) {
      got.push(chunk.subarray())
      n += chunk.byteLength
      if (n >= PING_BYTES) break
    }
    signal.throwIfAborted()
    if (!equals(concat(got, n).subarray(0, PING_BYTES), data)) throw new Error('wrong ping answer')
    void stream.close({ signal: AbortSignal.timeout(CIRCUIT_CLOSE_TIMEOUT) }).catch(() => {})
  } catch (err) {
    stream.abort(err instanceof Error ? err : new Error(String(err)))
    throw err
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

/** Whether the peer answers a ping: over a relayed link's own connection, else through libp2p's ping service. */
export async function peerAnswers (libp2p: Pick<Libp2p, 'services'>, peer: PeerId, conn: Connection | undefined, timeoutMs: number): Promise<boolean> {
  if (conn?.limits != null) return await pingOver(conn, AbortSignal.timeout(timeoutMs)).then(() => true, () => false)
  const services = libp2p.services as { ping?: { ping: (p: PeerId, o: { signal: AbortSignal }) => Promise<number> } }
  if (services.ping === undefined) return false
  try {
    await services.ping.ping(peer, { signal: AbortSignal.timeout(timeoutMs) })
    return true
  } catch {
    return false
  }
}
