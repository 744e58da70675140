// Routing-table starvation: kad-dht fills a host's routing table from its
// first self-query (1 s after start, bounded at 5 s), from peers that query
// it, and from its refresh and next self-query, both 5 minutes later. A host
// that joined through one bootstrap peer which knew little then, or whose
// first self-query timed out on a loaded machine, keeps a table of one or two
// peers for those 5 minutes: its lookups and publishes go through them only.
// The filler asks the DHT for the peers closest to the host's own key again
// while the table is thin (fewer than K peers) and has grown since the last
// ask (a new DHT peer arrived) or the last ask found more peers; it stops
// asking when an ask found nothing new, until the table grows again. A failed
// ask (on a loaded machine: it timed out) is tried again after twice the last
// wait, up to kad-dht's own 5 minutes, so a starved host does not add a walk
// every 30 s to the load that starves it. A formed net whose tables do not
// change makes it do nothing at all.
import { setMaxListeners } from 'node:events'
import type { Libp2p } from '@libp2p/interface'
import type { SingleKadDHT } from '@libp2p/kad-dht'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { MINUTE, SECOND } from '../util/time.js'

/** A table with fewer peers than a Kademlia bucket holds (K) is thin: a self-query may find more. */
export const THIN_TABLE = 20
/** At most one self-query per this interval, ms. */
export const FILL_SPACING = 30 * SECOND
/** A failed self-query is retried after twice the last wait, at most this, ms (kad-dht's own self-query interval). */
export const FILL_BACKOFF_MAX = 5 * MINUTE
/** The first self-query of the filler waits this long after start, ms (kad-dht runs its own 1 s after start). */
export const FILL_FIRST_DELAY = 10 * SECOND
/** A self-query of the filler is given up after this, ms. */
export const FILL_TIMEOUT = 30 * SECOND

export interface TableFillerOptions {
  /** ms; default FILL_SPACING */
  spacing?: number
  /** ms; default FILL_FIRST_DELAY */
  firstDelay?: number
}

export class TableFiller {
  private timer?: NodeJS.Timeout
  private asking = false
  private stopped = true
  private lastAsk = 0
  /** routing-table size after the last ask; -1: never asked */
  private tableAtAsk = -1
  /** wait before the next ask, ms: the spacing, doubled by each failed ask */
  private wait: number
  /** self-queries run (for diagnostics and tests) */
  asks = 0
  private readonly spacing: number
  private readonly firstDelay: number
  private startedAt = 0

  constructor (private readonly libp2p: Libp2p, private readonly log: Logger, opts: TableFillerOptions = {}) {
    this.spacing = opts.spacing ?? FILL_SPACING
    this.wait = this.spacing
    this.firstDelay = opts.firstDelay ?? FILL_FIRST_DELAY
  }

  private get dht (): SingleKadDHT { return (this.libp2p as Libp2p<{ dht: SingleKadDHT }>).services.dht }

  size (): number { return this.dht.routingTable.size }

  start (): void {
    this.stopped = false
    this.startedAt = Date.now()
  }

  stop (): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
  }

  /** A DHT peer arrived: ask soon when the table is thin and changed since the last ask. */
  peerArrived (): void {
    const size = this.size()
    if (size >= THIN_TABLE || size === this.tableAtAsk) return
    this.schedule()
  }

  private schedule (): void {
    if (this.stopped || this.timer !== undefined || this.asking) return
    const now = Date.now()
    const at = Math.max(this.startedAt + this.firstDelay, this.lastAsk + this.wait)
    this.timer = setTimeout(() => { this.timer = undefined; void this.ask() }, Math.max(0, at - now))
    this.timer.unref()
  }

  private async ask (): Promise<void> {
    if (this.stopped || this.libp2p.status !== 'started' || this.size() >= THIN_TABLE) return
    this.asking = true
    this.asks++
    this.lastAsk = Date.now()
    const before = this.size()
    let failed = false
    try {
      const signal = AbortSignal.timeout(FILL_TIMEOUT)
      setMaxListeners(Infinity, signal) // every path and peer of the walk listens on it, as on kad-dht's own self-query signal
      for await (const _ of this.dht.getClosestPeers(this.libp2p.peerId.toMultihash().bytes, { signal })) { /* the query adds what it meets */ } // eslint-disable-line @typescript-eslint/no-unused-vars
    } catch (err) {
      failed = true
      this.log(`discovery: routing table of ${before} peers, self-query failed: ${errorMessage(err)}`)
    } finally {
      this.asking = false
    }
    this.tableAtAsk = this.size()
    this.wait = failed ? Math.min(2 * this.wait, FILL_BACKOFF_MAX) : this.spacing
    // a failed ask is tried again after the longer wait, one that found more after the spacing
    if ((failed || this.tableAtAsk > before) && this.tableAtAsk < THIN_TABLE) this.schedule()
  }
}
