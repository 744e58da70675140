import * as lp from 'it-length-prefixed'
import { pushable } from 'it-pushable'
import type { Connection, Stream } from '@libp2p/interface'
import { PacketCodec } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import type { AppendItem, AppendResult, InboxStore } from '../store/inbox.js'
import { ENTRY_HEADER } from '../store/inbox-values.js'
import { InboxFullError, MalformedFrameError, errorCode, errorMessage } from '../util/errors.js'
import { RECEIVER_PENDING_FRAMES } from './constants.js'
import type { Logger } from '../util/log.js'
import { MAX_FRAME_BYTES, decodeFrameSpaced, encodeAckFrame, encodeErrorFrame, lengthPrefixed, type AckResult } from './frame.js'
import { mark } from '../util/trace.js'
import { lazyWindowUpdates } from './yamux-window.js'

export interface Denial { code: string, reason: string, retry?: boolean }

/** Decides whether a packet from a remote host may enter a local inbox. */
export type Admit = (packet: Packet, remotePeer: string) => Promise<Denial | null>

/** Admit's decision at once when it needs no wait; undefined: ask Admit. */
export type AdmitNow = (packet: Packet, remotePeer: string) => Denial | null | undefined

export interface ReceiverDeps {
  inbox: InboxStore
  admit: Admit
  /** the same decision as `admit` where it can be made without waiting (a frame of such packets is admitted without an await per packet) */
  admitNow?: AdmitNow
  /** told about each denied packet (for denied-attempt notices) */
  onDenied?: (packet: Packet, denial: Denial) => void
  log: Logger
}

interface Slot { result?: AckResult, item?: AppendItem }

const RETRY_FIRST: AckResult = { c: 'RETRY', m: 'an earlier packet for this node must be retried first', r: true }

/**
 * The receiving half of the packet protocol: validates each packet, asks the
 * admission check, appends the admitted ones to the target inboxes, and acks
 * each packet only once it is durable. Frames are answered in order.
 */
export class PacketReceiver {
  /** decodes every inbound packet (its cache of recent node ids is this receiver's) */
  private readonly codec = new PacketCodec()
  /** the current inbound packet stream per remote host */
  private readonly current = new Map<string, Stream>()

  constructor (private readonly deps: ReceiverDeps) {}

  /**
   * One long-lived stream per peer pair: a new stream from a host supersedes
   * its old one (which may be a half-dead leftover of a partition that never
   * saw a FIN), so a reconnecting sender never leaves handlers behind.
   */
  private claim (remote: string, stream: Stream): void {
    const old = this.current.get(remote)
    this.current.set(remote, stream)
    if (old !== undefined && old !== stream) old.abort(new Error('superseded by a new packet stream from the same host'))
  }

  private release (remote: string, stream: Stream): void {
    if (this.current.get(remote) === stream) this.current.delete(remote)
  }

  async handle ({ stream, connection }: { stream: Stream, connection: Connection }): Promise<void> {
    const remote = connection.remotePeer.toString()
    this.claim(remote, stream)
    lazyWindowUpdates(stream) // window updates at half the window, as the link's side (yamux-window.ts)
    const out = pushable<Uint8Array>()
    // frames are pushed with their length prefix: one yamux frame, one write each
    void stream.sink(out).catch(() => {})
    // every step of this chain settles: a rejection between frames must never go unhandled
    let acks: Promise<void> = Promise.resolve()
    let failed: unknown
    let pending = 0
    const latch = new Set<string>()
    /** nodes latched because the store refused a write for them (answered RETRY, not INBOX_FULL) */
    const storeLatched = new Set<string>()
    try {
      for await (const chunk of lp.decode(stream.source, { maxDataLength: MAX_FRAME_BYTES })) {
        mark('rx.frame')
        // each packet copied once, into a buffer with room for its inbox value's header
        const frame = decodeFrameSpaced(chunk, ENTRY_HEADER)
        if (frame.t !== 'p') throw new MalformedFrameError(`malformed frame: a receiver takes packet frames, not type '${frame.t}'`)
        const admitted = this.admitAll(frame.p, frame.v, remote, latch)
        const slots = admitted instanceof Promise ? await admitted : admitted
        mark('rx.admitted')
        const done = this.commit(slots, latch, storeLatched)
        pending++
        acks = acks.then(async () => {
          const results = await done
          pending--
          out.push(encodeAckFrame(frame.b, results, true))
          mark('rx.ack')
        }).catch((err: unknown) => { failed ??= err })
        // a sender that ignores its window cannot make this host buffer without bound
        if (pending >= RECEIVER_PENDING_FRAMES) await acks
        if (failed !== undefined) throw failed
      }
      await acks
      if (failed !== undefined) throw failed
      out.end()
    } catch (err) {
      if (err instanceof Error && err.name === 'StreamResetError') {
        // the sender dropped the stream (it retries after a RETRY answer, reconnects, stops): nothing to answer on it
        this.deps.log(`packet stream from ${remote} reset by the sender`)
        await acks
        return
      }
      const code = wireCode(err)
      this.deps.log(`packet stream from ${remote}: ${code}: ${errorMessage(err)}`)
      await acks
      out.push(lengthPrefixed(encodeErrorFrame(code, errorMessage(err))))
      out.end()
      setTimeout(() => stream.abort(new Error('protocol error')), 100).unref()
    } finally {
      this.release(remote, stream)
    }
  }

  /**
   * `values[k]`, if given: packet k with ENTRY_HEADER free bytes before it, the inbox value to fill (decodeFrameSpaced).
   * Without a wait while admitNow decides (the common case): a frame's slots then come without an await per packet.
   */
  private admitAll (packets: Uint8Array[], values: Uint8Array[] | undefined, remote: string, retryBlocked: Set<string>): Slot[] | Promise<Slot[]> {
    const slots: Slot[] = []
    const now = this.deps.admitNow
    for (let k = 0; k < packets.length; k++) {
      const read = this.read(packets[k])
      if (!('packet' in read)) { slots.push(read); continue }
      const { packet } = read
      if (retryBlocked.has(packet.to)) { slots.push({ result: RETRY_FIRST }); continue }
      let denial: Denial | null | undefined
      try {
        denial = now?.(packet, remote)
      } catch {
        denial = undefined // the async check decides (and words the failure)
      }
      if (denial === undefined) return this.admitRest(slots, k, packet, packets, values, remote, retryBlocked)
      slots.push(this.decided(packet, packets[k], values?.[k], denial, retryBlocked))
    }
    return slots
  }

  /** admitAll from packet k on (decoded as `first`), each admission awaited in turn. */
  private async admitRest (slots: Slot[], k: number, first: Packet, packets: Uint8Array[], values: Uint8Array[] | undefined, remote: string, retryBlocked: Set<string>): Promise<Slot[]> {
    slots.push(await this.admitDecoded(first, packets[k], values?.[k], remote, retryBlocked))
    for (let j = k + 1; j < packets.length; j++) slots.push(await this.admitOne(packets[j], values?.[j], remote, retryBlocked))
    return slots
  }

  /** The packet of these bytes, or the result that refuses them. */
  private read (bytes: Uint8Array): { packet: Packet } | Slot {
    try {
      return { packet: this.codec.decode(bytes) }
    } catch (err) {
      return { result: { c: errorCode(err), m: errorMessage(err) } }
    }
  }

  /** The reference path of one packet: decode, then the (async) admission. */
  private async admitOne (bytes: Uint8Array, value: Uint8Array | undefined, remote: string, retryBlocked: Set<string>): Promise<Slot> {
    const read = this.read(bytes)
    if (!('packet' in read)) return read
    return await this.admitDecoded(read.packet, bytes, value, remote, retryBlocked)
  }

  private async admitDecoded (packet: Packet, bytes: Uint8Array, value: Uint8Array | undefined, remote: string, retryBlocked: Set<string>): Promise<Slot> {
    if (retryBlocked.has(packet.to)) return { result: RETRY_FIRST }
    let denial: Denial | null
    try {
      denial = await this.deps.admit(packet, remote)
    } catch (err) {
      // the check itself failed (e.g. a store read while the store reopens): nothing is decided, retry later
      denial = { code: errorCode(err), reason: `admission failed: ${errorMessage(err)}`, retry: true }
    }
    return this.decided(packet, bytes, value, denial, retryBlocked)
  }

  /** The slot of a packet once its admission is decided. */
  private decided (packet: Packet, bytes: Uint8Array, value: Uint8Array | undefined, denial: Denial | null, retryBlocked: Set<string>): Slot {
    if (denial !== null) {
      if (denial.retry === true) retryBlocked.add(packet.to)
      else this.deps.onDenied?.(packet, denial)
      return { result: { c: denial.code, m: denial.reason, ...(denial.retry === true ? { r: true } : {}) } }
    }
    return { item: value === undefined ? { nodeId: packet.to, packetId: packet.id, packet: bytes } : { nodeId: packet.to, packetId: packet.id, packet: bytes, value } }
  }

  /**
   * Append the admitted packets; never rejects. A store that refuses the
   * write (full disk, a failed write: StoreFullError / StoreFaultError) or
   * fails otherwise stored nothing: every packet of the frame is refused as
   * retry-later, and later packets for the same nodes on this stream too.
   */
  private async commit (slots: Slot[], latch: Set<string>, storeLatched: Set<string>): Promise<AckResult[]> {
    const items = slots.filter((s) => s.item !== undefined).map((s) => s.item as AppendItem)
    let appended: AppendResult[]
    try {
      appended = await this.deps.inbox.append(items, { latch })
    } catch (err) {
      for (const item of items) { latch.add(item.nodeId); storeLatched.add(item.nodeId) }
      const refusal: AckResult = { c: errorCode(err), m: errorMessage(err), r: true }
      return slots.map((s) => s.result ?? refusal)
    }
    let k = 0
    return slots.map((s) => {
      if (s.result !== undefined) return s.result
      const r = appended[k++]
      if ('error' in r) {
        // a full inbox is temporary (the sender retries); a stale packet is refused for good
        const { code, message, name } = r.error
        if (name !== InboxFullError.name) return { c: code, m: message }
        // latched by a refused store write, not by a full inbox
        return storeLatched.has(s.item?.nodeId ?? '') ? RETRY_FIRST : { c: code, m: message, r: true }
      }
      return { s: r.seq }
    })
  }
}

/** it-length-prefixed's errors for a bad or oversized length prefix, or a stream cut inside a frame */
const LENGTH_PREFIX_ERRORS = new Set(['InvalidDataLengthError', 'InvalidDataLengthLengthError', 'UnexpectedEOFError', 'InvalidMessageLengthError'])

/** The code an error frame carries: what cannot be decoded is MALFORMED_FRAME (docs/PROTOCOL.md). */
function wireCode (err: unknown): string {
  if (err instanceof Error && LENGTH_PREFIX_ERRORS.has(err.name)) return 'MALFORMED_FRAME'
  return errorCode(err)
}
