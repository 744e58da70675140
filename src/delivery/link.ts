import * as lp from 'it-length-prefixed'
import { pushable, type Pushable } from 'it-pushable'
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'
import type { OutboxEntry, OutboxStore } from '../store/outbox.js'
import { MalformedFrameError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { ACK_STALLS, ACK_TIMEOUT, BACKOFF_MAX, BACKOFF_MIN, DIAL_TIMEOUT, FRAME_BYTES, FRAME_PACKETS, PENDING_BYTES, PENDING_ENTRIES, PING_INTERVAL, PING_TIMEOUT, WINDOW_FRAMES } from './constants.js'
import { LinkBudget, dialFreshCircuit, endCircuit, frameOf, peerAnswers } from './link-budget.js'
import { MAX_BATCH, MAX_FRAME_BYTES, PACKET_PROTOCOL, decodeFrame, outgoingPacketsFrame, type AckResult, type OutgoingFrame } from './frame.js'
import { reheld, sortAck, unheld } from './link-held.js'
import { openPacketStream } from './yamux-window.js'
import { mark } from '../util/trace.js'

export interface LinkEvents {
  /** entries the remote host accepted (durable in the target inbox) */
  delivered: (entries: OutboxEntry[]) => Promise<void>
  /** entries the remote host rejected for good */
  rejected: (items: Array<{ entry: OutboxEntry, code: string, reason: string }>) => Promise<void>
  readsPacket?: (entry: OutboxEntry) => boolean // whether `delivered` reads its packet (sent large ones are let go: link-held.ts)
}

export interface LinkDeps {
  libp2p: Libp2p
  outbox: OutboxStore
  log: Logger
  events: LinkEvents
}

type LinkState = 'idle' | 'connecting' | 'open' | 'backoff' | 'stopped'

/**
 * The sending half of one long-lived packet stream to one peer. Reads the
 * durable outbox for that peer in key order, sends frames of many packets,
 * keeps a window of frames in flight, and resends from the start of the queue
 * after any reconnect (the receiver deduplicates by message id).
 */
export class PeerLink {
  private state: LinkState = 'idle'
  private stream?: Stream
  /** the connection the stream runs on, and (relayed) what may still be sent on it before its relay cuts it */
  private connection?: Connection
  private budget?: LinkBudget
  /** the next frame does not fit in the relayed connection: no more sends; once all are acked, a fresh circuit */
  private draining = false
  private out?: Pushable<OutgoingFrame>
  private readonly inflight = new Map<number, OutboxEntry[]>()
  private lastSentKey?: string
  private nextBatch = 1
  private attempts = 0
  private timer?: NodeJS.Timeout
  private ackTimer?: NodeJS.Timeout
  private pingTimer?: NodeJS.Timeout
  private pumping = false
  private wakeAgain = false
  private pumpScheduled = false
  /**
   * Committed entries handed over in memory (key order), not yet sent. The
   * store stays the source of truth: after (re)open the link reads the store
   * (`fromStore`) until it has caught up, and whenever this buffer would
   * exceed its bound it is dropped and the store is read again.
   */
  private pending: OutboxEntry[] = []
  private pendingBytes = 0
  private fromStore = true
  /** bumped whenever `pending` lost entries; a store read only hands over to memory if none were lost meanwhile */
  private dropped = 0
  private generation = 0
  /** consecutive ack timeouts during which the peer still answered pings */
  private stalls = 0
  /** the host's last RETRY answer (e.g. INBOX_FULL: the packets stay queued, resent after the backoff) was logged: not again until something is delivered */
  private retryLogged = false

  constructor (readonly peerId: PeerId, private readonly deps: LinkDeps) {}

  get status (): LinkState { return this.state }

  /** Whether this outbox entry is in a frame sent and not yet acked. */
  isInflight (key: string): boolean {
    for (const entries of this.inflight.values()) {
      if (entries.length > 0 && entries[0].key <= key && key <= entries[entries.length - 1].key) return true
    }
    return false
  }

  /**
   * Entries just committed (durable) for this peer, in key order: send them
   * from memory once the microtasks queued so far ran. A synced batch resolves
   * all its writers at once, so one frame carries them all, and it leaves
   * before the replies to those sends are written, not a turn later.
   */
  offer (entries: OutboxEntry[]): void {
    if (this.state !== 'open') { this.wake(); return }
    for (const e of entries) this.hold(e)
    this.schedulePump(true)
  }

  private hold (e: OutboxEntry): void {
    if (this.lastSentKey !== undefined && e.key <= this.lastSentKey) return
    const last = this.pending[this.pending.length - 1]
    if (last !== undefined && last.key > e.key) {
      // handed over out of commit order: fall back to the store, which has both
      this.dropPending()
      return
    }
    if (this.pending.length >= PENDING_ENTRIES || this.pendingBytes + e.packet.byteLength > PENDING_BYTES) {
      this.dropPending()
      return
    }
    this.pending.push(e)
    this.pendingBytes += e.packet.byteLength
  }

  private dropPending (): void {
    this.pending = []
    this.pendingBytes = 0
    this.fromStore = true
    this.dropped++
  }

  /** Pump once this turn's callbacks have run (`soon`: once the microtasks queued so far have). */
  private schedulePump (soon = false): void {
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    if (soon) queueMicrotask(this.scheduledPump)
    else setImmediate(this.scheduledPump)
  }

  private readonly scheduledPump = (): void => { this.pumpScheduled = false; void this.pump() }

  /** New packets are queued, or the peer just connected: make progress now. */
  wake (immediate = false): void {
    if (this.state === 'stopped') return
    if (this.state === 'open') { this.schedulePump(); return }
    if (this.state === 'backoff' && immediate) {
      clearTimeout(this.timer)
      this.state = 'idle'
    }
    if (this.state === 'idle') void this.connect()
  }

  private async connect (): Promise<void> {
    this.state = 'connecting'
    const gen = ++this.generation
    try {
      const { stream, connection } = await openPacketStream(this.deps.libp2p, this.peerId, PACKET_PROTOCOL, { signal: AbortSignal.timeout(DIAL_TIMEOUT) })
      if (this.state !== 'connecting' || gen !== this.generation) { stream.abort(new Error('link superseded')); return }
      this.open(stream, connection, gen)
    } catch (err) {
      this.deps.log(`link ${this.peerId.toString()}: dial failed: ${errorMessage(err)}`)
      this.fail(gen)
    }
  }

  private open (stream: Stream, connection: Connection, gen: number): void {
    this.stream = stream
    this.connection = connection
    this.budget = LinkBudget.of(connection)
    this.draining = false
    this.out = pushable<OutgoingFrame>()
    this.state = 'open'
    this.stalls = 0
    this.lastSentKey = undefined
    this.inflight.clear()
    this.dropPending()
    // frames are pushed with their length prefix (encodePacketsFramePieces): one yamux message per 64 KiB, as one buffer would be
    void stream.sink(this.out).catch(() => this.fail(gen))
    void this.read(stream, gen)
    this.schedulePing(gen)
    void this.pump()
  }

  private async read (stream: Stream, gen: number): Promise<void> {
    try {
      for await (const chunk of lp.decode(stream.source, { maxDataLength: MAX_FRAME_BYTES })) {
        const frame = decodeFrame(chunk.subarray())
        if (frame.t === 'a') {
          mark('link.ack')
          await this.onAck(frame.b, frame.r, gen)
        }
        else if (frame.t === 'e') throw new Error(`remote error ${frame.c}: ${frame.m}`)
      }
      throw new Error('stream closed by remote')
    } catch (err) {
      if (gen === this.generation && this.state === 'open') this.deps.log(`link ${this.peerId.toString()}: ${errorMessage(err)}`)
      this.fail(gen)
    }
  }

  private async onAck (batch: number, results: AckResult[], gen: number): Promise<void> {
    const sent = this.inflight.get(batch)
    if (sent === undefined || gen !== this.generation) return
    if (results.length !== sent.length) throw new MalformedFrameError(`malformed frame: ack of batch ${batch} has ${results.length} results for ${sent.length} packets`) // one per packet, in frame order
    this.inflight.delete(batch)
    this.stalls = 0
    this.armAckTimer(gen)
    const entries = await reheld(sent, this.deps.outbox, (k) => !('s' in results[k]) || this.deps.events.readsPacket?.(sent[k]) !== false)
    const { delivered, rejected, retry } = sortAck(results, entries)
    if (delivered.length > 0) {
      this.attempts = 0
      this.retryLogged = false
      this.deps.events.delivered(delivered).catch((err) => this.deps.log(`link ${this.peerId.toString()}: marking delivered failed: ${errorMessage(err)}`))
    }
    if (rejected !== undefined) await this.deps.events.rejected(rejected)
    if (retry !== undefined) {
      if (!this.retryLogged) this.deps.log(`link ${this.peerId.toString()}: the host asks to retry later (${retry.c}: ${retry.m}); its packets stay queued and are resent with backoff`)
      this.retryLogged = true
      this.fail(gen)
      return
    }
    void this.pump()
  }

  private async pump (): Promise<void> {
    if (this.pumping) { this.wakeAgain = true; return }
    this.pumping = true
    try {
      do {
        this.wakeAgain = false
        while (this.state === 'open' && this.inflight.size < WINDOW_FRAMES) {
          const gen = this.generation
          if (this.draining) { if (this.inflight.size === 0) this.rotate(gen); break }
          const entries = await this.nextEntries()
          // a reconnect during the read starts again from the head of the queue
          if (entries.length === 0 || this.state !== 'open' || gen !== this.generation) break
          if (!this.send(entries)) this.drain(gen)
        }
      } while (this.wakeAgain && this.state === 'open')
    } catch (err) {
      // the outbox could not be read (e.g. the store is being reopened after a fault): retry with backoff
      this.deps.log(`link ${this.peerId.toString()}: reading the outbox failed: ${errorMessage(err)}`)
      this.fail(this.generation)
    } finally {
      this.pumping = false
    }
  }

  private async nextEntries (): Promise<OutboxEntry[]> {
    if (!this.fromStore) return this.takePending()
    const dropped = this.dropped
    const { entries, complete } = await this.deps.outbox.listFrame(this.peerId.toString(), this.lastSentKey, FRAME_PACKETS, this.frameBytes())
    if (complete && dropped === this.dropped && this.adopt(entries)) return this.takePending()
    return entries
  }

  /**
   * The store read returned everything committed up to its snapshot; entries
   * committed later were handed over since (nothing was dropped meanwhile).
   * Continue from memory with both, unless that would exceed the bound.
   */
  private adopt (listed: OutboxEntry[]): boolean {
    const tail = listed.length > 0 ? listed[listed.length - 1].key : this.lastSentKey
    const later = tail === undefined ? this.pending : this.pending.filter((e) => e.key > tail)
    const merged = listed.length === 0 ? later : [...listed, ...later]
    const bytes = merged.reduce((n, e) => n + e.packet.byteLength, 0)
    if (merged.length > PENDING_ENTRIES || bytes > PENDING_BYTES) return false
    this.pending = merged
    this.pendingBytes = bytes
    this.fromStore = false
    return true
  }

  /** The next frame from memory; entries already past their expiry are left to the TTL sweep. */
  private takePending (): OutboxEntry[] {
    const now = Date.now()
    let skip = 0
    while (skip < this.pending.length && this.pending[skip].exp <= now) skip++
    const out = frameOf(skip === 0 ? this.pending : this.pending.slice(skip), this.frameBytes())
    const used = skip + out.length
    for (let k = 0; k < used; k++) this.pendingBytes -= this.pending[k].packet.byteLength
    this.pending = this.pending.slice(used)
    return out
  }

  private frameBytes (): number { return this.budget?.frameBytes ?? FRAME_BYTES }

  /** Send one frame; false (nothing sent) when it does not fit in what the relayed connection has left. */
  private send (entries: OutboxEntry[]): boolean {
    const b = this.nextBatch
    const frame = outgoingPacketsFrame(b, entries.map((e) => e.packet))
    if (this.budget !== undefined && !this.budget.take(frame.byteLength)) return false
    this.nextBatch = b >= MAX_BATCH ? 1 : b + 1
    this.inflight.set(b, unheld(entries))
    this.lastSentKey = entries[entries.length - 1].key
    this.out?.push(frame)
    mark('link.frame')
    if (this.ackTimer === undefined) this.armAckTimer(this.generation)
    return true
  }

  /** The frame just read was not sent (the store still has it: it is read again on the next circuit); send no more. */
  private drain (gen: number): void {
    this.draining = true
    this.dropPending()
    if (this.inflight.size === 0) this.rotate(gen)
    else dialFreshCircuit(this.deps.libp2p, this.peerId, this.deps.log)
  }

  /** All sent on a relayed connection near its limits is acked: end it before its relay cuts it, and open the stream again at once over a fresh circuit (the same relay or another). */
  private rotate (gen: number): void {
    if (gen !== this.generation || this.state !== 'open') return
    const conn = this.connection
    this.deps.log(`link ${this.peerId.toString()}: relayed connection near its relay's limits (${this.budget?.describe() ?? ''}), moving to a fresh circuit`)
    this.generation++
    this.teardown()
    this.state = 'idle'
    if (conn !== undefined) endCircuit(conn)
    void this.connect()
  }

  private armAckTimer (gen: number): void {
    clearTimeout(this.ackTimer)
    this.ackTimer = undefined
    if (this.inflight.size === 0) return
    this.ackTimer = setTimeout(() => { void this.onAckTimeout(gen) }, ACK_TIMEOUT)
  }

  /**
   * No ack for ACK_TIMEOUT: a peer that vanished without FIN looks exactly
   * like this. Ping it: no answer means the connection is dead (drop it, so
   * the next dial does not reuse it); an answer means the receiver is slow,
   * which is tolerated for ACK_STALLS timeouts in a row.
   */
  private async onAckTimeout (gen: number): Promise<void> {
    if (gen !== this.generation || this.state !== 'open') return
    this.ackTimer = undefined
    if (!await this.alive()) {
      if (gen !== this.generation) return
      this.deps.log(`link ${this.peerId.toString()}: no ack within ${ACK_TIMEOUT} ms and no ping answer, dropping the connection`)
      this.abortConnections('no ack, no ping')
      this.fail(gen)
      return
    }
    if (gen !== this.generation || this.state !== 'open') return
    if (++this.stalls >= ACK_STALLS) {
      this.deps.log(`link ${this.peerId.toString()}: peer answers pings but acked nothing for ${ACK_STALLS * ACK_TIMEOUT} ms, dropping the stream`)
      this.fail(gen)
      return
    }
    this.armAckTimer(gen)
  }

  private async alive (): Promise<boolean> { return await peerAnswers(this.deps.libp2p, this.peerId, this.connection, PING_TIMEOUT) }

  /** Drop the peer's connections; a relayed link only its own (a fresh circuit may be opening beside it). */
  private abortConnections (why: string): void {
    const own = this.connection
    for (const c of own?.limits != null ? [own] : this.deps.libp2p.getConnections(this.peerId)) c.abort(new Error(why))
  }

  private schedulePing (gen: number): void {
    clearTimeout(this.pingTimer)
    this.pingTimer = setTimeout(() => { void this.ping(gen) }, PING_INTERVAL)
  }

  private async ping (gen: number): Promise<void> {
    if (gen !== this.generation || this.state !== 'open') return
    if (await this.alive()) { if (gen === this.generation) this.schedulePing(gen); return }
    if (gen !== this.generation) return
    this.deps.log(`link ${this.peerId.toString()}: ping failed, dropping the connection`)
    this.abortConnections('ping timeout')
    this.fail(gen)
  }

  /** Tear the stream down and retry with backoff; in-flight frames are resent later. */
  private fail (gen: number): void {
    if (gen !== this.generation || this.state === 'stopped' || this.state === 'backoff') return
    this.generation++
    this.teardown()
    this.state = 'backoff'
    const delay = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** this.attempts++) * (0.5 + Math.random() / 2)
    this.timer = setTimeout(() => {
      if (this.state !== 'backoff') return
      this.state = 'idle'
      if (this.deps.outbox.depthOf(this.peerId.toString()) > 0) this.wake()
    }, delay)
  }

  private teardown (): void {
    clearTimeout(this.ackTimer)
    clearTimeout(this.pingTimer)
    this.ackTimer = undefined
    this.out?.end()
    this.stream?.abort(new Error('link reset'))
    this.stream = undefined
    this.out = undefined
    this.connection = undefined
    this.budget = undefined
    this.draining = false
    this.inflight.clear()
    this.lastSentKey = undefined
    this.dropPending()
  }

  stop (): void {
    this.generation++
    clearTimeout(this.timer)
    this.teardown()
    this.state = 'stopped'
  }
}
