// Reading and writing amesh records in the host's Kademlia DHT. kad-dht 15's
// `get` yields the selector's winner as the final VALUE event and every other
// peer's (already validated) record as a PEER_RESPONSE event: both are
// collected, so a name record's claims can be merged across peers and a
// collision seen even when peers disagree.
//
// Lookups do not run a query to its end when an answer is in hand (a full
// `get` asks every one of the ~20 closest peers, dialling each): a lookup
// stops once a few peers (CARD_RESPONDERS, NAME_RESPONDERS) answered with a
// record, and takes the newest card or the union of the claims among them,
// so one peer holding a stale card or a partial claim set does not decide
// (trade-off in docs/DISCOVERY.md §4).

import { setMaxListeners } from 'node:events'
import { MessageType, type KadDHT } from '@libp2p/kad-dht'
import type { Libp2p } from '@libp2p/interface'

/**
 * kad-dht hands a query's signal to every step it runs in parallel: the
 * peer-store lookups of the K (20) closest peers each add an abort listener
 * to it while they wait for the store's read lock (one more per dial), so a
 * healthy query holds ~2K listeners at once, and Node warned at 10. The
 * signal's limit is that known fan-out; listeners beyond it would be a leak.
 */
const QUERY_LISTENERS = 64

function querySignal (timeout: number): AbortSignal {
  const signal = AbortSignal.timeout(timeout)
  setMaxListeners(QUERY_LISTENERS, signal)
  return signal
}
import { SECOND } from '../util/time.js'
import type { VerifiedCard, SignedAgentCard } from './card.js'
import {
  encodeCardRecord, encodeNameRecord, mergeNameClaims, nameKey, recordKey, resolveName, validateCardRecord,
  type NameResolution, type SignedNameClaim
} from './records.js'

/** amesh's own Kademlia DHT (not the public IPFS one). */
export const DHT_PROTOCOL = '/amesh/kad/1.0.0'
/** Bound on one DHT query (get or put), ms. */
export const DHT_QUERY_TIMEOUT = 20 * SECOND
/** A card lookup stops once this many peers answered with a record. */
export const CARD_RESPONDERS = 3
/** A name lookup answers once this many peers answered with a record (or the query ended). */
export const NAME_RESPONDERS = 3

export interface ScanOptions {
  /** stop the query once this many peers answered with a record (default: run it to its end) */
  responders?: number
}

export class DhtRecords {
  constructor (private readonly libp2p: Libp2p, private readonly timeout = DHT_QUERY_TIMEOUT) {}

  private get dht (): KadDHT {
    return (this.libp2p as Libp2p<{ dht: KadDHT }>).services.dht
  }

  /** DHT queries started by this host's lookups and publishes (get and put), for diagnostics and tests. */
  queries = 0

  /**
   * Every distinct record value seen for a key: each peer's and the chosen
   * one (the local record only when the query runs to its end).
   */
  async values (key: Uint8Array, opts: ScanOptions = {}): Promise<Uint8Array[]> {
    const seen = new Map<string, Uint8Array>()
    const limit = opts.responders ?? Infinity
    let responders = 0
    this.queries++
    try {
      for await (const event of this.dht.get(key, { signal: querySignal(this.timeout) })) {
        const value = event.name === 'VALUE' ? event.value : event.name === 'PEER_RESPONSE' ? event.record?.value : undefined
        if (value === undefined) continue
        seen.set(Buffer.from(value).toString('base64'), value)
        if (event.name === 'PEER_RESPONSE' && ++responders >= limit) break
      }
    } catch {
      // not found, timed out or no peers: what was seen so far is the answer
    }
    return [...seen.values()]
  }

  /**
   * Put a record to the closest peers; how many stored it. A put that
   * reached some of them before its bound ran out (one late peer of 20 on a
   * loaded mesh) is published, not failed: counted as failed, it was redone
   * at every DHT peer's arrival (discovery's retry), and those redone puts
   * ran late again — a publish storm (30 simulated hosts: 24 full publishes
   * in 30 s of an idle mesh). Only a put no peer took throws.
   */
  private async put (key: Uint8Array, value: Uint8Array): Promise<number> {
    let stored = 0
    this.queries++
    try {
      for await (const event of this.dht.put(key, value, { signal: querySignal(this.timeout) })) {
        if (event.name === 'PEER_RESPONSE' && event.messageType === MessageType.PUT_VALUE) stored++
      }
    } catch (err) {
      if (stored === 0) throw err
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

  /**
   * The newest valid, unexpired card among the records of the first
   * CARD_RESPONDERS peers that hold one (`responders` overrides; the whole
   * query when fewer hold it).
   */
  async findCard (nodeId: string, now: number = Date.now(), responders = CARD_RESPONDERS): Promise<VerifiedCard | undefined> {
    const key = recordKey(nodeId)
    let best: VerifiedCard | undefined
    for (const value of await this.values(key, { responders })) {
      try {
        const vc = validateCardRecord(key, value, now)
        if (best === undefined || vc.issuedAt > best.issuedAt) best = vc
      } catch {
        // forged, stale beyond expiry or malformed: never used
      }
    }
    return best
  }

  /** Every live claim on a name, merged over the records of up to NAME_RESPONDERS peers (`responders` overrides). */
  async findName (name: string, now: number = Date.now(), responders = NAME_RESPONDERS): Promise<NameResolution> {
    return resolveName(name, await this.values(nameKey(name), { responders }), now)
  }
}
