import * as cbor from '@ipld/dag-cbor'
import * as lp from 'it-length-prefixed'
import type { Libp2p, PeerId, Stream } from '@libp2p/interface'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { ON_LIMITED, openStream } from '../util/streams.js'

export const GRANTS_PROTOCOL = '/amesh/grants/1.0.0'
export const REVOCATION_TOPIC = 'amesh/revocations/1'
const MAX_MESSAGE = 4 * 1024 * 1024
/** A bundle is sent in pages of at most this many bytes (well under MAX_MESSAGE), one stream each. */
export const PAGE_BYTES = 1024 * 1024
/** and at most this many chains and revocations per page (parseBundle keeps at most 10,000 chains) */
export const PAGE_ITEMS = 5000
const TIMEOUT = 5000

export interface GrantBundle {
  /** grant chains for nodes served by the receiving host */
  chains: Uint8Array[][]
  /** signed revocations */
  revocations: Uint8Array[]
}

export interface GrantSink {
  learn: (bundle: GrantBundle, from: string) => Promise<void>
  /** what to hand a peer when it connects */
  bundleFor: (peer: string) => GrantBundle
}

function parseBundle (bytes: Uint8Array): GrantBundle {
  const v = cbor.decode<Partial<GrantBundle>>(bytes)
  const chains = Array.isArray(v.chains) ? v.chains.filter((c) => Array.isArray(c) && c.every((b) => b instanceof Uint8Array)).slice(0, 10_000) : []
  const revocations = Array.isArray(v.revocations) ? v.revocations.filter((b) => b instanceof Uint8Array).slice(0, 100_000) : []
  return { chains, revocations }
}

/** Encoded size of one item inside a page, bytes (a CBOR head per byte string and per array). */
function itemBytes (item: Uint8Array | Uint8Array[]): number {
  return item instanceof Uint8Array ? item.length + 9 : item.reduce((n, b) => n + b.length + 9, 9)
}

/** Split a bundle into pages that each encode under `maxBytes` (an item larger than a page goes alone). */
export function pageBundle (bundle: GrantBundle, maxBytes: number = PAGE_BYTES, maxItems: number = PAGE_ITEMS): GrantBundle[] {
  const pages: GrantBundle[] = []
  let page: GrantBundle = { chains: [], revocations: [] }
  let bytes = 32
  const add = (item: Uint8Array | Uint8Array[], into: (p: GrantBundle) => void): void => {
    const size = itemBytes(item)
    const count = page.chains.length + page.revocations.length
    if (count > 0 && (bytes + size > maxBytes || count >= maxItems)) {
      pages.push(page)
      page = { chains: [], revocations: [] }
      bytes = 32
    }
    into(page)
    bytes += size
  }
  for (const chain of bundle.chains) add(chain, (p) => p.chains.push(chain))
  for (const rev of bundle.revocations) add(rev, (p) => p.revocations.push(rev))
  if (page.chains.length + page.revocations.length > 0) pages.push(page)
  return pages
}

/**
 * Hands grant chains to the audience's host and spreads revocations: pushed
 * directly to connected hosts (and to each host when it connects), and
 * published on a gossip topic for hosts further away.
 */
export class GrantExchange {
  constructor (private readonly libp2p: Libp2p, private readonly sink: GrantSink, private readonly log: Logger) {}

  async start (): Promise<void> {
    await this.libp2p.handle(GRANTS_PROTOCOL, ({ stream, connection }) => { void this.serve(stream, connection.remotePeer.toString()) }, { maxInboundStreams: 256, maxOutboundStreams: 256, ...ON_LIMITED })
    this.libp2p.addEventListener('peer:identify', (evt) => { void this.pushTo(evt.detail.peerId, this.sink.bundleFor(evt.detail.peerId.toString())) })
    const pubsub = this.pubsub()
    pubsub?.subscribe(REVOCATION_TOPIC)
    pubsub?.addEventListener('message', (evt) => {
      if (evt.detail.topic !== REVOCATION_TOPIC) return
      // counted against the peer that published it (gossipsub signs messages)
      const from = evt.detail.from?.toString() ?? 'gossip'
      void this.sink.learn({ chains: [], revocations: [evt.detail.data] }, from).catch(() => {})
    })
  }

  private pubsub (): { subscribe: (t: string) => void, publish: (t: string, d: Uint8Array) => Promise<unknown>, addEventListener: (e: 'message', h: (evt: CustomEvent<{ topic: string, data: Uint8Array, from?: PeerId }>) => void) => void } | undefined {
    return (this.libp2p.services as Record<string, unknown>).pubsub as ReturnType<GrantExchange['pubsub']>
  }

  private async serve (stream: Stream, from: string): Promise<void> {
    try {
      for await (const chunk of lp.decode(stream.source, { maxDataLength: MAX_MESSAGE })) {
        await this.sink.learn(parseBundle(chunk.subarray()), from)
        break
      }
      await stream.close()
    } catch (err) {
      this.log(`grants from ${from}: ${errorMessage(err)}`)
      stream.abort(new Error('bad grants message'))
    }
  }

  /** Push a bundle to one peer, page by page (best effort; it is pushed again when the peer reconnects). */
  async pushTo (peer: PeerId, bundle: GrantBundle): Promise<boolean> {
    for (const page of pageBundle(bundle)) {
      if (!await this.pushPage(peer, page)) return false
    }
    return true
  }

  private async pushPage (peer: PeerId, bundle: GrantBundle): Promise<boolean> {
    try {
      const signal = AbortSignal.timeout(TIMEOUT)
      const stream = await openStream(this.libp2p, peer, GRANTS_PROTOCOL, { signal })
      await stream.sink(lp.encode([cbor.encode(bundle)]))
      // the receiver closes its side once the bundle is stored: then the hand-off is done
      for await (const _ of stream.source) { if (signal.aborted) break }
      return true
    } catch (err) {
      this.log(`grants to ${peer.toString()}: ${errorMessage(err)}`)
      return false
    }
  }

  /** A new revocation: to every connected host now, and by gossip. */
  async spreadRevocation (bytes: Uint8Array): Promise<void> {
    await Promise.all(this.libp2p.getPeers().map(async (p) => await this.pushTo(p, { chains: [], revocations: [bytes] })))
    await this.pubsub()?.publish(REVOCATION_TOPIC, bytes).catch(() => undefined)
  }
}
