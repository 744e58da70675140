import * as cbor from '@ipld/dag-cbor'
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import * as lp from 'it-length-prefixed'
import { verifyByNodeId, type NodeKey } from '../identity/node-key.js'
import { RECEIPT_STATES, type ReceiptState, type ReceiptStore } from '../store/receipts.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { ON_LIMITED, openStream } from '../util/streams.js'

// `/amesh/receipt/1.0.0` (docs/PROTOCOL.md): the receiving host tells the
// sending host what became of a message. One stream per batch: the dialer
// writes one length-prefixed CBOR map {receipts: [signed receipt bytes]}, the
// listener answers {results: ["ok" | "<CODE>: reason"]}, one per receipt, in
// order. A signed receipt is CBOR [body bytes, Ed25519 signature by the
// receiving node's key]; body = CBOR {v: 1, p: packet id, n: receiving node
// id, s: state, t: ms, r?: reason}. The sending host accepts a receipt only
// for a message it sent to node n and handed to the peer on this connection.

export const RECEIPT_PROTOCOL = '/amesh/receipt/1.0.0'
const DOMAIN = new TextEncoder().encode('amesh/receipt/1\n')
const MAX_FRAME = 1024 * 1024
const MAX_RECEIPTS = 1000
const MAX_REASON = 1024
const TIMEOUT = 10 * SECOND
/** queued receipts are retried this often (and whenever a peer connects) */
export const RECEIPT_RETRY = 5 * SECOND

export interface ReceiptBody { v: 1, p: string, n: string, s: ReceiptState, t: number, r?: string }

function signed (body: Uint8Array): Uint8Array {
  const out = new Uint8Array(DOMAIN.byteLength + body.byteLength)
  out.set(DOMAIN, 0)
  out.set(body, DOMAIN.byteLength)
  return out
}

export function signReceipt (key: NodeKey, body: ReceiptBody): Uint8Array {
  const bytes = cbor.encode(body)
  return cbor.encode([bytes, key.sign(signed(bytes))])
}

/** A signed receipt decoded and checked against its node id, or the reason it is refused. */
export function openReceipt (bytes: Uint8Array): ReceiptBody | { refused: string } {
  try {
    const [body, sig] = cbor.decode<[Uint8Array, Uint8Array]>(bytes)
    const b = cbor.decode<ReceiptBody>(body)
    if (b.v !== 1 || typeof b.p !== 'string' || typeof b.n !== 'string' || !(RECEIPT_STATES as readonly string[]).includes(b.s) || typeof b.t !== 'number') return { refused: 'MALFORMED: not a receipt' }
    if (b.r !== undefined && (typeof b.r !== 'string' || b.r.length > MAX_REASON)) return { refused: 'MALFORMED: bad reason' }
    if (!verifyByNodeId(b.n, signed(body), sig)) return { refused: `BAD_SIGNATURE: not signed by ${b.n}` }
    return b
  } catch (err) {
    return { refused: `MALFORMED: ${errorMessage(err)}` }
  }
}

/** The sender-side check of a frame's receipts: per receipt, undefined to accept, or why not ("CODE: reason"). */
export type AcceptReceipts = (remotePeer: string, bodies: ReceiptBody[]) => Promise<Array<string | undefined>>

export interface ReceiptLinkDeps {
  libp2p: Libp2p
  store: ReceiptStore
  accept: AcceptReceipts
  log: Logger
}

async function readOne<T> (stream: Stream): Promise<T> {
  for await (const chunk of lp.decode(stream.source, { maxDataLength: MAX_FRAME })) return cbor.decode<T>(chunk.subarray())
  throw new Error('no frame')
}

/** Serves and sends receipts; queued ones survive restarts and go out when their host is reachable. */
export class ReceiptLink {
  private timer?: NodeJS.Timeout
  private flushing?: Promise<void>
  private again = false
  private readonly onConnect = (): void => { this.kick() }

  constructor (private readonly deps: ReceiptLinkDeps) {}

  async start (): Promise<void> {
    await this.deps.libp2p.handle(RECEIPT_PROTOCOL, ({ stream, connection }) => { void this.serve(stream, connection) }, { maxInboundStreams: 64, maxOutboundStreams: 64, ...ON_LIMITED })
    this.deps.libp2p.addEventListener('peer:connect', this.onConnect)
    this.timer = setInterval(() => this.kick(), RECEIPT_RETRY)
    this.timer.unref()
    this.kick()
  }

  async stop (): Promise<void> {
    clearInterval(this.timer)
    this.deps.libp2p.removeEventListener('peer:connect', this.onConnect)
    await this.flushing
    await this.deps.libp2p.unhandle(RECEIPT_PROTOCOL).catch(() => {})
  }

  /** Send what is queued, soon. */
  kick (): void {
    if (this.flushing !== undefined) { this.again = true; return }
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined
      if (this.again) { this.again = false; this.kick() }
    })
  }

  private async flush (): Promise<void> {
    const waiting = await this.deps.store.waiting(MAX_RECEIPTS * 4)
    const byDest = new Map<string, typeof waiting>()
    for (const w of waiting) byDest.set(w.dest, [...(byDest.get(w.dest) ?? []), w])
    for (const [dest, items] of byDest) {
      try {
        const results = await this.sendTo(peerIdFromString(dest), items.slice(0, MAX_RECEIPTS).map((i) => i.bytes))
        // a refusal is final (the sender will never accept it): drop it too
        await this.deps.store.done(items.slice(0, results.length).map((i) => i.key))
        results.forEach((r, k) => { if (r !== 'ok') this.deps.log(`receipt ${items[k].key} refused by ${dest}: ${r}`) })
      } catch (err) {
        // unreachable now: kept, retried on connect and every RECEIPT_RETRY
        if (this.deps.libp2p.getConnections(peerIdFromString(dest)).length > 0) this.deps.log(`receipts to ${dest}: ${errorMessage(err)}`)
      }
    }
  }

  private async sendTo (peer: PeerId, receipts: Uint8Array[]): Promise<string[]> {
    const stream = await openStream(this.deps.libp2p, peer, RECEIPT_PROTOCOL, { signal: AbortSignal.timeout(TIMEOUT) })
    try {
      await stream.sink(lp.encode([cbor.encode({ receipts })]))
      const reply = await readOne<{ results: string[] }>(stream)
      if (!Array.isArray(reply.results) || reply.results.length !== receipts.length) throw new Error('malformed receipt reply')
      return reply.results
    } finally {
      await stream.close().catch(() => {})
    }
  }

  private async serve (stream: Stream, connection: Connection): Promise<void> {
    const remote = connection.remotePeer.toString()
    try {
      const frame = await readOne<{ receipts: unknown }>(stream)
      if (!Array.isArray(frame.receipts) || frame.receipts.length > MAX_RECEIPTS) throw new Error('malformed receipt frame')
      const results = await this.judge(remote, frame.receipts)
      await stream.sink(lp.encode([cbor.encode({ results })]))
    } catch (err) {
      this.deps.log(`receipts from ${remote}: ${errorMessage(err)}`)
      stream.abort(new Error('receipt exchange failed'))
    }
  }

  /** Check every receipt of a frame; store the accepted ones in one batch (the group commit: durable before "ok"). */
  async judge (remote: string, receipts: unknown[]): Promise<string[]> {
    const results: string[] = []
    const opened: Array<{ k: number, body: ReceiptBody }> = []
    for (const raw of receipts) {
      const body = raw instanceof Uint8Array ? openReceipt(raw) : { refused: 'MALFORMED: not bytes' }
      if ('refused' in body) results.push(body.refused)
      else { opened.push({ k: results.length, body }); results.push('ok') }
    }
    const refusals = await this.deps.accept(remote, opened.map((o) => o.body))
    const accepted: Array<{ id: string, state: ReceiptState, at: number, reason?: string }> = []
    opened.forEach(({ k, body }, n) => {
      const refusal = refusals[n]
      if (refusal !== undefined) { results[k] = refusal; return }
      accepted.push({ id: body.p, state: body.s, at: body.t, ...(body.r === undefined ? {} : { reason: body.r }) })
    })
    await this.deps.store.record(accepted, true)
    return results
  }
}
