import type { Denial } from '../delivery/receiver.js'
import type { Packet } from '../packet/types.js'
import type { Host } from '../host/host.js'

/**
 * The receiving host's admission check for a packet from a remote host:
 * the target lives here, and the sender node is served by the remote host
 * (channel binding, from the sender's signed card).
 */
export async function admitPacket (host: Host, packet: Packet, remotePeer: string): Promise<Denial | null> {
  if (host.nodes.get(packet.to) === undefined) {
    return { code: 'NOT_SERVED_HERE', reason: `node ${packet.to} is not served by this host` }
  }
  let served = host.directory.hostOf(packet.from)
  if (served === undefined) {
    await host.exchange.exchange(await peerOf(host, remotePeer)).catch(() => 0)
    served = host.directory.hostOf(packet.from)
  }
  if (served !== remotePeer) {
    return { code: 'CHANNEL_BINDING', reason: `node ${packet.from} is not served by the sending host ${remotePeer}` }
  }
  return host.acl.admit(packet)
}

async function peerOf (host: Host, peer: string): Promise<import('@libp2p/interface').PeerId> {
  const conn = host.libp2p.getConnections().find((c) => c.remotePeer.toString() === peer)
  if (conn === undefined) throw new Error('not connected')
  return conn.remotePeer
}
