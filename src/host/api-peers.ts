// Peers as state a user can see and undo: `amesh peers`, `join`, `join --forget`.
import type { Connection } from '@libp2p/interface'
import type { Handlers } from '../control/server.js'
import type { PeerRow } from '../control/wire.js'
import { checkPeerAddr } from '../control/peer-addr.js'
import type { Components } from './components.js'

type PeerApiComponents = Pick<Components, 'libp2p' | 'keeper' | 'peerBook' | 'config'>

function connectionRow (c: Connection): PeerRow {
  const remote = c.remoteAddr.toString()
  return { peer: c.remotePeer.toString(), addrs: [remote], direction: c.direction, relayed: remote.includes('/p2p-circuit'), opened: c.timeline.open, encryption: c.encryption }
}

/** One row per connected peer (its connections' addresses merged). */
function connected (host: PeerApiComponents): PeerRow[] {
  const byPeer = new Map<string, PeerRow>()
  for (const c of host.libp2p.getConnections()) {
    const row = connectionRow(c)
    const seen = byPeer.get(row.peer)
    if (seen === undefined) { byPeer.set(row.peer, row); continue }
    seen.addrs.push(...row.addrs)
    seen.relayed &&= row.relayed
  }
  return [...byPeer.values()]
}

export function peerMethods (host: PeerApiComponents): Handlers<'peers' | 'join' | 'join.forget'> {
  return {
    peers: { call: async () => ({ connected: connected(host), remembered: await host.peerBook.list(), configured: host.config.peers }) },
    join: {
      call: async (p) => {
        checkPeerAddr(p.addr, { anyPeer: p.any_peer })
        return { peerId: await host.keeper.join(p.addr) }
      }
    },
    'join.forget': { call: async (p) => ({ forgotten: await host.keeper.forget(p.addr) }) }
  }
}
