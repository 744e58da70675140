// Lazy yamux window updates on the packet stream.
//
// @chainsafe/libp2p-yamux 7.0.4 sends a WindowUpdate frame every time the
// reader takes a chunk off a stream whose receive window is not full, that is
// after nearly every data frame: one more frame, one more noise encryption and
// one more socket write on the receiving side, and one more frame to read on
// the sending side, for each packet frame of T1 (see PERFORMANCE.md, session
// 17). go-yamux and the yamux spec's reference implementation send the update
// only once half of the window has been consumed; the sender still has the
// other half to write meanwhile, so a stream that keeps the window busy never
// waits. Here the packet streams do the same: the stream's own
// `sendWindowUpdate` runs (and sends) only when the unused receive capacity has
// fallen to half the window or less, or when the stream still has to send its
// SYN/ACK flags. The window growth (doubling within 4 RTTs) stays the
// library's own, decided at each update it sends.
//
// This replaces a method on the stream instance, so the package is pinned to
// the exact version whose fields it reads (package.json); the test
// test/delivery/yamux-window.test.ts checks the fields on real libp2p
// streams and fails when a new version renames them.
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'
import { StreamState, YamuxStream } from '@chainsafe/libp2p-yamux/stream'
import { openStreamOn, type OpenStreamOptions } from '../util/streams.js'

/** The fields of a YamuxStream the lazy rule reads (the library's own names). */
interface WindowFields {
  state: StreamState
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

/** Whether a window update is due: flags still to send, or at most half of the receive window left. */
export function windowUpdateDue (s: Pick<WindowFields, 'state' | 'recvWindow' | 'recvWindowCapacity'>): boolean {
  return s.state !== StreamState.Established || s.recvWindowCapacity * 2 <= s.recvWindow
}

/**
 * Make a yamux stream send its window updates at half the window. Returns
 * whether it applied (false for a stream of another muxer, left as it is).
 */
export function lazyWindowUpdates (stream: Stream): boolean {
  if (!(stream instanceof YamuxStream)) return false
  const s = stream as unknown as WindowFields
  if (typeof s.sendWindowUpdate !== 'function' || typeof s.recvWindow !== 'number' || typeof s.recvWindowCapacity !== 'number') return false
  const eager = s.sendWindowUpdate.bind(s)
  s.sendWindowUpdate = () => { if (windowUpdateDue(s)) eager() }
  return true
}

/** A packet stream to `peer` (openStreamOn) with lazy window updates. */
export async function openPacketStream (libp2p: Pick<Libp2p, 'getConnections' | 'dial'>, peer: PeerId, protocol: string, opts: OpenStreamOptions = {}): Promise<{ stream: Stream, connection: Connection }> {
  const opened = await openStreamOn(libp2p, peer, protocol, opts)
  lazyWindowUpdates(opened.stream)
  return opened
}
