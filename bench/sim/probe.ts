// What the simulation measures on its own hosts without changing them: the
// hops of DHT queries (read from kad-dht's own query events), and the
// process's CPU and memory per host.
import type { PeerId } from '@libp2p/interface'
import type { QueryEvent } from '@libp2p/kad-dht'
import type { RunningHost } from '../../src/host/components.js'
import { dhtOf } from './net.js'

/** Hops of the DHT queries run on instrumented hosts: depth of the first peer that answered with a record (0: none did). */
export const queryHops: number[] = []

type Get = (key: Uint8Array, options?: object) => AsyncIterable<QueryEvent>

/**
 * Count hops on a host's DHT gets: peers from the routing table are hop 1, a
 * peer first named in a response from a hop-k peer is hop k + 1. The events
 * pass through unchanged.
 */
export function instrumentHops (h: RunningHost): void {
  const dht = dhtOf(h) as unknown as { get: Get }
  const original: Get = dht.get.bind(dht)
  dht.get = async function * (key, options) {
    const depth = new Map<string, number>()
    const hop = (p: PeerId): number => depth.get(p.toString()) ?? 1
    let found = 0
    try {
      for await (const e of original(key, options)) {
        if (e.name === 'PEER_RESPONSE') {
          const d = hop(e.from)
          for (const c of e.closer) if (!depth.has(c.id.toString())) depth.set(c.id.toString(), d + 1)
          if (found === 0 && e.record !== undefined) found = d
        } else if (e.name === 'VALUE' && found === 0) {
          found = hop(e.from)
        }
        yield e
      }
    } finally {
      queryHops.push(found)
    }
  }
}

export interface Usage { cpuMs: number, rssBytes: number, heapBytes: number }

function collect (): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) { gc(); gc() }
}

/** CPU used by the process so far, and its memory after a full collection (run node with --expose-gc). */
export function usage (): Usage {
  collect()
  const cpu = process.cpuUsage()
  const m = process.memoryUsage()
  return { cpuMs: (cpu.user + cpu.system) / 1000, rssBytes: m.rss, heapBytes: m.heapUsed + m.external + m.arrayBuffers }
}
