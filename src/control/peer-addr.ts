// Peer addresses a user gives (`amesh join ADDR`, `--peer`, config `peers`):
// checked before anything dials or remembers them, on both sides of the socket.
import { multiaddr } from '@multiformats/multiaddr'
import { InvalidAddressError, errorMessage } from '../util/errors.js'

/**
 * A peer address must parse as a multiaddr and, unless `anyPeer`, end in
 * `/p2p/<peer id>`: without it libp2p cannot check that it reached the host
 * meant, and the bootstrap keeper could never re-dial it.
 */
export function checkPeerAddr (addr: string, opts: { anyPeer?: boolean, flag?: string } = {}): void {
  const what = opts.flag === undefined ? 'address' : `${opts.flag} address`
  let peer: string | null
  try {
    peer = multiaddr(addr).getPeerId()
  } catch (err) {
    throw new InvalidAddressError(`invalid ${what} "${addr}": ${errorMessage(err)} (expected e.g. /ip4/10.0.0.2/tcp/4747/p2p/12D3Koo...)`)
  }
  if (peer === null && opts.anyPeer !== true) {
    throw new InvalidAddressError(`${what} "${addr}" names no peer: it must end in /p2p/<peer id> (\`amesh id\` on that host prints its addresses)${opts.flag === undefined ? ', or pass --any-peer to dial whoever answers' : ''}`)
  }
}
