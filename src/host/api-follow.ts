// inbox.follow and inbox.read as the daemon serves them: follow replays a
// node's inbox page by page at the consumer's pace, then live entries; a
// client that asked for binary framing gets each page as one frame of the
// stored bytes, built straight from the store's values (readStored +
// encodeFollowValues; the reference, encodeFollowPage of read's entries, is
// beside it and equal byte for byte: test/store/inbox-stored.test.ts);
// inbox.read's frame copies each value in as the store hands it over
// (eachStored + FollowFrameBuilder, readFrame; its reference readFrameOf).
import { encodeFollowPage, encodeFollowValues, FRAME_HEAD, MAX_FRAME_BYTES, VALUE_HEADER } from '../control/follow-frames.js'
import { FollowFrameBuilder } from '../control/follow-frame-builder.js'
import { EncodedArray, FramedAnswer, PagedArray, type Handler, type StreamSink } from '../control/server.js'
import type { RenderedPacket } from '../control/wire.js'
import { renderEntry } from '../packet/render.js'
import { entriesJsonEncoder, renderedJsonSize } from '../packet/render-json.js'
import type { InboxEntry } from '../store/inbox.js'
import { entriesOf } from '../store/inbox-stored.js'
import { FramePool } from './frame-pool.js'
import { mark } from '../util/trace.js'
import { SECOND } from '../util/time.js'
import type { Components } from './components.js'

/** entries per follow page at first; later pages hold about FOLLOW_PAGE_BYTES */
const FOLLOW_FIRST_PAGE = 256
const FOLLOW_MIN_PAGE = 16
const FOLLOW_MAX_PAGE = 4096
const FOLLOW_PAGE_BYTES = 1024 * 1024

/** `inbox.read` stops adding entries once their stored bytes reach this (at least one entry) */
export const READ_REPLY_BYTES = 16 * 1024 * 1024
/** `inbox.read` with binary framing reads this many stored bytes at most (its frame then fits MAX_FRAME_BYTES: a packet is at most 512 KiB) */
const READ_FRAME_BYTES = 15 * 1024 * 1024
/** an `inbox.read` reply is rendered in pages of about this many packet bytes */
const READ_PAGE_BYTES = 1024 * 1024

type Host = Pick<Components, 'inbox' | 'label'>
type Sent = Promise<{ drained: Promise<void> }>

/** The next page size: about FOLLOW_PAGE_BYTES of packets like the ones just sent. */
function nextPageSize (page: FollowPage): number {
  const per = Math.max(1, page.packetBytes / page.count)
  return Math.min(FOLLOW_MAX_PAGE, Math.max(FOLLOW_MIN_PAGE, Math.floor(FOLLOW_PAGE_BYTES / per)))
}

/** A page read for a follower: its entry count, last seq and packet bytes, and how to send it once `before` drained. */
interface FollowPage { count: number, last: number, packetBytes: number, send: (before: Promise<void>) => Sent }

/** Hand one binary frame to the socket once `before` (the previous page) drained; its buffer goes back to `pool` once written. */
async function sendFrame (emitBinary: (frame: Uint8Array) => Promise<void>, frame: Uint8Array, before: Promise<void>, pool: FramePool): Sent {
  await before
  const drained = emitBinary(frame)
  pool.giveAfter(frame, drained)
  mark('follow.emit')
  drained.catch(() => {}) // awaited before the next page or at the end
  return { drained }
}

/**
 * How a follower's pages are read: for binary framing as stored values, the
 * frame built from them (no entry objects; values of the old format go the
 * reference way); otherwise as entries rendered to JSON.
 */
function pageReader (host: Host, nodeId: string, sink: StreamSink, binary: boolean, pool: FramePool): (from: number, limit: number) => Promise<FollowPage> {
  const label = (id: string): string => host.label(id)
  const emitBinary = sink.emitBinary
  if (binary && emitBinary !== undefined) {
    return async (from, limit) => {
      const page = await host.inbox.readStored(nodeId, from, limit)
      const count = page.seqs.length
      const frame = (): Uint8Array => page.plain ? encodeFollowValues(page.seqs, page.values, label, pool.take) : encodeFollowPage(entriesOf(page), label)
      return { count, last: page.seqs[count - 1] ?? from, packetBytes: page.bytes - VALUE_HEADER * count, send: async (before) => await sendFrame(emitBinary, frame(), before, pool) }
    }
  }
  return async (from, limit) => {
    const entries = await host.inbox.read(nodeId, from, limit)
    let packetBytes = 0
    for (const e of entries) packetBytes += e.packet.byteLength
    return { count: entries.length, last: entries[entries.length - 1]?.seq ?? from, packetBytes, send: async (before) => await emitPage(sink, entries, label, before) }
  }
}

/**
 * Send one page of entries on the stream as JSON events. With a framing sink
 * the page is rendered now and sent once `before` (the previous page) has
 * drained, so rendering overlaps the consumer reading; resolves when this
 * page is handed to the socket, with the promise of its drain (wrapped: a
 * promise resolving to a promise would wait for it).
 */
async function emitPage (sink: StreamSink, entries: InboxEntry[], label: (id: string) => string, before: Promise<void>): Sent {
  if (sink.frame !== undefined && sink.emitFramed !== undefined) {
    const lines = sink.frame(entries.length, entriesJsonEncoder(entries, label), renderedJsonSize(entries))
    mark('follow.framed')
    await before
    const drained = sink.emitFramed(lines)
    mark('follow.emit')
    drained.catch(() => {}) // awaited before the next page or at the end
    return { drained }
  }
  await before
  const events = entries.map((e) => renderEntry(e, label))
  mark('follow.emit')
  if (sink.emitMany !== undefined) await sink.emitMany(events)
  else for (const ev of events) await sink.emit(ev)
  return { drained: Promise.resolve() }
}

/** The entries of one `inbox.read`, as pages of about READ_PAGE_BYTES. */
export async function * readPages (host: Host, nodeId: string, after: number, limit: number): AsyncGenerator<EncodedArray<RenderedPacket>> {
  const entries = await host.inbox.read(nodeId, after, limit, READ_REPLY_BYTES)
  const label = (x: string): string => host.label(x)
  let start = 0
  while (start < entries.length) {
    let end = start
    let bytes = 0
    while (end < entries.length && bytes < READ_PAGE_BYTES) bytes += entries[end++].packet.byteLength
    const page = entries.slice(start, end)
    start = end
    yield new EncodedArray<RenderedPacket>(page.length, entriesJsonEncoder(page, label), renderedJsonSize(page) + 64)
  }
}

/**
 * The entries of one `inbox.read` with binary framing: one follow page
 * (follow-frames.ts) of at most READ_FRAME_BYTES of stored values, each value
 * copied into the frame as the store hands it over (FollowFrameBuilder: no
 * page of values held). Values of the old format, or a frame past a client's
 * bound (names of many distinct nodes), go the reference way (readFrameOf).
 */
export async function readFrame (host: Host, nodeId: string, after: number, limit: number, alloc?: (size: number) => Buffer): Promise<Uint8Array> {
  // the frame's first buffer is sized for the entries there can be (a read near the end is small), not for the limit
  const { last } = await host.inbox.info(nodeId)
  const builder = new FollowFrameBuilder((id) => host.label(id), alloc, Math.max(1, Math.min(limit, last - after)), READ_FRAME_BYTES)
  const whole = await host.inbox.eachStored(nodeId, after, limit, READ_FRAME_BYTES, (seq, value) => builder.add(seq, value))
  mark('read.stored')
  const frame = whole ? builder.finish() : undefined
  if (frame !== undefined && frame.byteLength - FRAME_HEAD <= MAX_FRAME_BYTES) return frame
  return await readFrameOf(host, nodeId, after, limit, alloc)
}

/**
 * readFrame's reference: the page read whole (readStored), then its frame
 * (encodeFollowValues, or encodeFollowPage of its entries), halved until it
 * fits a client's bound.
 */
export async function readFrameOf (host: Host, nodeId: string, after: number, limit: number, alloc?: (size: number) => Buffer): Promise<Uint8Array> {
  const label = (id: string): string => host.label(id)
  const page = await host.inbox.readStored(nodeId, after, limit, READ_FRAME_BYTES)
  for (let n = page.seqs.length; ; n = Math.ceil(n / 2)) {
    const seqs = page.seqs.slice(0, n)
    const values = page.values.slice(0, n)
    const frame = page.plain ? encodeFollowValues(seqs, values, label, alloc) : encodeFollowPage(entriesOf({ ...page, seqs, values }), label)
    if (frame.byteLength - FRAME_HEAD <= MAX_FRAME_BYTES || n <= 1) return frame
  }
}

/** the `inbox.read` frames' pool: one free buffer kept (a pager asks for its next page once this one arrived), let go after 2 s without a read */
const READ_POOL = { max: 1, releaseAfterMs: 2 * SECOND }

/**
 * `inbox.read`: JSON pages, or for binary framing one frame (readFrame)
 * whose buffer comes from this method's pool and goes back once written.
 */
export function readMethod (host: Host & Pick<Components, 'inbox'>, nodeOf: (name: string) => string): Handler<'inbox.read'> {
  const pool = new FramePool(READ_POOL)
  return {
    call: async (p) => {
      const id = nodeOf(p.node)
      const after = p.after ?? (await host.inbox.info(id)).cursor
      const limit = p.limit ?? 1000
      if (p.framing === 'binary') {
        const frame = await readFrame(host, id, after, limit, pool.take)
        mark('read.framed')
        return new FramedAnswer<RenderedPacket>(frame, (write) => pool.giveAfter(frame, write))
      }
      // read when the reply is written, encoded straight into it page by page:
      // the same JSON as the array of renderEntry objects
      return new PagedArray<RenderedPacket>(() => readPages(host, id, after, limit))
    }
  }
}

/** A page read in progress, and the wake-up armed before it started (an append after the read began resolves it). */
interface PageRead { page: Promise<FollowPage>, limit: number, appended: Promise<void> }

/**
 * Replay everything after the cursor, then live packets, at the consumer's
 * pace. A page holds about FOLLOW_PAGE_BYTES. While one page drains into the
 * socket the next is read and rendered (at most three pages held: draining,
 * rendered, read ahead), and it is sent only once the previous one drained.
 * Once caught up, the loop waits for an append.
 */
export async function follow (host: Host, nodeId: string, after: number, sink: StreamSink, binary: boolean): Promise<void> {
  let cursor = after
  // the binary frames' buffers, reused while the replay runs (frame-pool.ts)
  const pool = new FramePool()
  const read = pageReader(host, nodeId, sink, binary, pool)
  let wake: (() => void) | undefined
  const onAppend = (id: string): void => { if (id === nodeId) wake?.() }
  host.inbox.on('append', onAppend)
  // once caught up, new entries come from the inbox's in-memory tail, not a store read
  const unwatch = host.inbox.watch(nodeId)
  sink.signal.addEventListener('abort', () => wake?.())
  const start = (from: number, limit: number): PageRead => {
    // armed before the read starts, so an append during the read is not missed
    const appended = new Promise<void>((resolve) => { wake = resolve })
    return { page: read(from, limit), limit, appended }
  }
  let drained: Promise<void> = Promise.resolve()
  let reading = start(cursor, FOLLOW_FIRST_PAGE)
  try {
    while (!sink.signal.aborted) {
      const page = await reading.page
      mark('follow.page')
      if (page.count === 0) {
        await drained
        pool.clear()
        await reading.appended
        reading = start(cursor, reading.limit)
        continue
      }
      cursor = page.last
      const full = page.count === reading.limit
      const limit = nextPageSize(page)
      const ahead = full ? start(cursor, limit) : undefined
      ahead?.page.catch(() => {}) // awaited next turn; not unhandled if this write fails first
      drained = (await page.send(drained)).drained
      if (ahead !== undefined) { reading = ahead; continue }
      await drained
      pool.clear()
      await reading.appended
      reading = start(cursor, limit)
    }
    await drained
  } finally {
    // a read started just before the consumer left is never awaited: it may fail as the store closes
    reading.page.catch(() => {})
    host.inbox.off('append', onAppend)
    unwatch()
  }
}
