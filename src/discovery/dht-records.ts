// Reading and writing amesh records in the host's Kademlia DHT. kad-dht 15's
// `get` yields the selector's winner as the final VALUE event and every other
// peer's (already validated) record as a PEER_RESPONSE event: both are
// collected, so a name record's claims can be merged across peers and a
// collision seen even when peers disagree.

import type { KadDHT } from '@libp2p/kad-dht'
import type { Libp2p } from '@libp2p/interface'
import { SECOND } from '../delivery/constants.js'
import type { VerifiedCard, SignedAgentCard } from './card.js'
import {
  encodeCardRecord, encodeNameRecord, mergeNameClaims, nameKey, recordKey, resolveName, validateCardRecord,
  type NameResolution, type SignedNameClaim
} from './records.js'

/** Bound on one DHT query (get or put), ms. */
export const DHT_QUERY_TIMEOUT = 20 * SECOND

export class DhtRecords {
  constructor (private readonly libp2p: Libp2p, private readonly timeout = DHT_QUERY_TIMEOUT) {}

  private get dht (): KadDHT {
    return (this.libp2p as Libp2p<{ dht: KadDHT }>).services.dht
  }

  /** Every distinct record value seen for a key: the local one, each peer's, and the chosen one. */
  async values (key: Uint8Array): Promise<Uint8Array[]> {
    const seen = new Map<string, Uint8Array>()
    try {
      for await (const event of this.dht.get(key, { signal: AbortSignal.timeout(this.timeout) })) {
        const value = event.name === 'VALUE' ? event.value : event.name === 'PEER_RESPONSE' ? event.record?.value : undefined
        if (value !== undefined) seen.set(Buffer.from(value).toString('base64'), value)
      }
    } catch {
      // not found, timed out or no peers: what was seen so far is the answer
    }
    return [...seen.values()]
  }

  private async put (key: Uint8Array, value: Uint8Array): Promise<number> {
    let stored = 0
    for await (const event of this.dht.put(key, value, { signal: AbortSignal.timeout(this.timeout) })) {
      if (event.name === 'PEER_RESPONSE') stored++
    }
    return stored
  }

  /** Store a node's signed card under /amesh-card/<nodeId>; returns how many peers took it. */
  async putCard (card: SignedAgentCard, nodeId: string): Promise<number> {
    return await this.put(recordKey(nodeId), encodeCardRecord(card))
  }

  /** Merge a node's claim into the name record the DHT holds, and store the merged set. */
  async putClaim (claim: SignedNameClaim): Promise<number> {
    const key = nameKey(claim.name)
    const merged = mergeNameClaims(claim.name, await this.values(key), [claim])
    return await this.put(key, encodeNameRecord(merged))
  }

  /** The newest valid, unexpired card the DHT holds for a node id. */
  async findCard (nodeId: string, now: number = Date.now()): Promise<VerifiedCard | undefined> {
    const key = recordKey(nodeId)
    let best: VerifiedCard | undefined
    for (const value of await this.values(key)) {
      try {
        const vc = validateCardRecord(key, value, now)
        if (best === undefined || vc.issuedAt > best.issuedAt) best = vc
      } catch {
        // forged, stale beyond expiry or malformed: never used
      }
    }
    return best
  }

  /** Every live claim on a name, merged over all peers' records. */
  async findName (name: string, now: number = Date.now()): Promise<NameResolution> {
    return resolveName(name, await this.values(nameKey(name)), now)
  }
}
