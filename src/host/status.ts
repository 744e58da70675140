import { statSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { NodeRow, StatusResult } from '../control/wire.js'
import type { Components } from './components.js'
import { heapPolicy } from './heap.js'
import { relayStatus } from './relay-wiring.js'
import { errorMessage } from '../util/errors.js'

/** Bytes of the files in a directory and, one level down, in its directories (the store's value log). */
function dirSize (dir: string, depth = 1): number {
  let total = 0
  for (const f of readdirSync(dir, { withFileTypes: true })) {
    try {
      if (f.isDirectory()) total += depth > 0 ? dirSize(join(dir, f.name), depth - 1) : 0
      else total += statSync(join(dir, f.name)).size
    } catch { /* file went away */ }
  }
  return total
}

/** The daemon's memory, bytes: resident set, V8 heap, and buffers outside it (one reading: each walks the heap's spaces and reads /proc). */
function memory (): Record<string, number> {
  const m = process.memoryUsage()
  return { rss: m.rss, heap_used: m.heapUsed, heap_total: m.heapTotal, external: m.external, array_buffers: m.arrayBuffers }
}

export async function hostStatus (host: Pick<Components, 'nodes' | 'inbox' | 'outbox' | 'libp2p' | 'paths' | 'startedAt' | 'config' | 'delivery' | 'committer' | 'guard'>): Promise<StatusResult> {
  const nodes = []
  for (const n of host.nodes.list()) {
    // a store being reopened after a fault cannot be read for a moment: status still answers
    const info = await host.inbox.info(n.record.id).catch((err: unknown) => ({ error: errorMessage(err) }))
    nodes.push({ name: n.record.name, id: n.record.id, kind: n.record.kind, parent: n.record.parent, inbox: info })
  }
  const outbox = host.outbox.totals()
  const mem = memory()
  return {
    pid: process.pid,
    peerId: host.libp2p.peerId.toString(),
    addrs: host.libp2p.getMultiaddrs().map(String),
    home: host.paths.home,
    uptime_ms: Date.now() - host.startedAt,
    durability: host.config.durability,
    mdns: host.config.mdns,
    peers: host.libp2p.getPeers().map(String),
    nodes,
    outbox: { queued: outbox.queued, dead: outbox.dead, by_destination: outbox.byDestination },
    links: host.delivery.linkStates(),
    store_bytes: dirSize(host.paths.store),
    store: host.guard.health(),
    commits: { ...host.committer.stats, backlog: host.committer.backlog },
    rss_bytes: mem.rss,
    memory: mem,
    heap_policy: heapPolicy() ?? 'node defaults',
    relay: relayStatus(host.libp2p, host.config)
  }
}

export function nodeList (host: Pick<Components, 'nodes' | 'libp2p' | 'directory' | 'consumption'>): NodeRow[] {
  const local = host.nodes.list().map((n) => ({ name: n.record.name, id: n.record.id, kind: n.record.kind, host: host.libp2p.peerId.toString(), local: true, parent: n.record.parent, session: host.consumption.sessionNow(n.record.id) }))
  const remote = host.directory.list().map((c) => ({ name: c.name, id: c.nodeId, kind: c.kind, host: c.hostPeerId, local: false, parent: c.parent }))
  return [...local, ...remote]
}
