import { EncodedArray, implement, PagedArray, type MethodTable, type StreamSink } from '../control/server.js'
import type { RenderedPacket } from '../control/wire.js'
import { UnknownNodeError } from '../util/errors.js'
import type { Components } from './components.js'
import { renderEntry } from '../packet/render.js'
import { entriesJsonEncoder, renderedJsonSize } from '../packet/render-json.js'
import { encodeFollowPage } from '../control/follow-frames.js'
import type { InboxEntry } from '../store/inbox.js'
import { hostStatus, nodeList } from './status.js'
import { aclMethods } from './api-acl.js'
import { agentsMethods } from './api-agents.js'
import { discoveryMethods } from './api-discovery.js'
import { inboxMethods } from './api-inbox.js'
import { permissionMethods } from './api-permission.js'
import { consumptionMethods, readUpTo } from './api-consumption.js'
import { receiptMethods } from './api-receipts.js'
import { sendBatchMethods } from './api-send.js'
import { nodeMethods } from './api-nodes.js'
import { peerMethods } from './api-peers.js'
import { a2aMethods, a2aOff, type A2aFaceState } from './api-a2a.js'
import { mark } from '../util/trace.js'

/** entries per follow page at first; later pages hold about FOLLOW_PAGE_BYTES */
const FOLLOW_FIRST_PAGE = 256
const FOLLOW_MIN_PAGE = 16
const FOLLOW_MAX_PAGE = 4096
const FOLLOW_PAGE_BYTES = 1024 * 1024

/** `inbox.read` stops adding entries once their stored bytes reach this (at least one entry) */
export const READ_REPLY_BYTES = 16 * 1024 * 1024
/** an `inbox.read` reply is rendered in pages of about this many packet bytes */
const READ_PAGE_BYTES = 1024 * 1024

function localNode (host: Pick<Components, 'nodes'>, n: string): string {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return node.record.id
}

/** The next page size: about FOLLOW_PAGE_BYTES of packets like the ones just sent. */
function nextPageSize (entries: InboxEntry[]): number {
  let bytes = 0
  for (const e of entries) bytes += e.packet.byteLength
  const per = Math.max(1, bytes / entries.length)
  return Math.min(FOLLOW_MAX_PAGE, Math.max(FOLLOW_MIN_PAGE, Math.floor(FOLLOW_PAGE_BYTES / per)))
}


/**
 * Send one page of entries on the stream: for a client that asked for binary
 * framing, as one frame of the stored bytes (follow-frames.ts). With a framing sink the page is
 * rendered now and sent once `before` (the previous page) has drained, so
 * rendering overlaps the consumer reading; resolves when this page is
 * handed to the socket, with the promise of its drain (wrapped: a promise
 * resolving to a promise would wait for it).
 */
async function emitPage (sink: StreamSink, entries: InboxEntry[], label: (id: string) => string, before: Promise<void>, binary: boolean): Promise<{ drained: Promise<void> }> {
  if (binary && sink.emitBinary !== undefined) {
    const frame = encodeFollowPage(entries, label)
    await before
    const drained = sink.emitBinary(frame)
    mark('follow.emit')
    drained.catch(() => {}) // awaited before the next page or at the end
    return { drained }
  }
  if (sink.frame !== undefined && sink.emitFramed !== undefined) {
    const lines = sink.frame(entries.length, entriesJsonEncoder(entries, label), renderedJsonSize(entries))
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
async function * readPages (host: Pick<Components, 'inbox' | 'label'>, nodeId: string, after: number, limit: number): AsyncGenerator<EncodedArray<RenderedPacket>> {
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

/** A page read in progress, and the wake-up armed before it started (an append after the read began resolves it). */
interface PageRead { entries: Promise<InboxEntry[]>, limit: number, appended: Promise<void> }

/**
 * Replay everything after the cursor, then live packets, at the consumer's
 * pace. A page holds about FOLLOW_PAGE_BYTES. While one page drains into the
 * socket the next is read and rendered (at most three pages held: draining,
 * rendered, read ahead), and it is sent only once the previous one drained.
 * Once caught up, the loop waits for an append.
 */
async function follow (host: Pick<Components, 'inbox' | 'label'>, nodeId: string, after: number, sink: StreamSink, binary: boolean): Promise<void> {
  let cursor = after
  const label = (id: string): string => host.label(id)
  let wake: (() => void) | undefined
  const onAppend = (id: string): void => { if (id === nodeId) wake?.() }
  host.inbox.on('append', onAppend)
  // once caught up, new entries come from the inbox's in-memory tail, not a store read
  const unwatch = host.inbox.watch(nodeId)
  sink.signal.addEventListener('abort', () => wake?.())
  const start = (from: number, limit: number): PageRead => {
    // armed before the read starts, so an append during the read is not missed
    const appended = new Promise<void>((resolve) => { wake = resolve })
    return { entries: host.inbox.read(nodeId, from, limit), limit, appended }
  }
  let drained: Promise<void> = Promise.resolve()
  let page = start(cursor, FOLLOW_FIRST_PAGE)
  try {
    while (!sink.signal.aborted) {
      const entries = await page.entries
      if (entries.length === 0) {
        await drained
        await page.appended
        page = start(cursor, page.limit)
        continue
      }
      cursor = entries[entries.length - 1].seq
      const full = entries.length === page.limit
      const limit = nextPageSize(entries)
      const ahead = full ? start(cursor, limit) : undefined
      ahead?.entries.catch(() => {}) // awaited next turn; not unhandled if this write fails first
      drained = (await emitPage(sink, entries, label, drained, binary)).drained
      if (ahead !== undefined) { page = ahead; continue }
      await drained
      await page.appended
      page = start(cursor, limit)
    }
    await drained
  } finally {
    // a read started just before the consumer left is never awaited: it may fail as the store closes
    page.entries.catch(() => {})
    host.inbox.off('append', onAppend)
    unwatch()
  }
}

/** The daemon's control methods, each over the components it reads. */
export function controlMethods (host: Components, shutdown: () => void, a2a: A2aFaceState = a2aOff()): MethodTable {
  return implement({
    ...a2aMethods(host, a2a),
    status: { call: async () => ({ ...(await hostStatus(host)), a2a: a2a.info }) },
    id: {
      call: async () => ({ peerId: host.libp2p.peerId.toString(), addrs: host.libp2p.getMultiaddrs().map(String) })
    },
    nodes: { call: async () => await host.receipts.presence.fill(nodeList(host)) }, // remote nodes' presence from their hosts
    'node.add': {
      call: async (p) => {
        const node = await host.registry.add(p.name, p.parent)
        return { id: node.record.id, name: node.record.name, parent: node.record.parent, depth: node.record.depth }
      }
    },
    'node.ensure': {
      call: async (p) => {
        const node = await host.registry.ensure(p.name)
        return { id: node.record.id, name: node.record.name }
      }
    },
    ...receiptMethods(host), // send (with its receipt), receipt.get, receipt.wait
    ...sendBatchMethods(host),
    'inbox.read': {
      call: async (p) => {
        const id = localNode(host, p.node)
        const after = p.after ?? (await host.inbox.info(id)).cursor
        const limit = p.limit ?? 1000
        // read when the reply is written, encoded straight into it page by page:
        // the same JSON as the array of renderEntry objects
        return new PagedArray<RenderedPacket>(() => readPages(host, id, after, limit))
      }
    },
    'inbox.follow': {
      stream: async (p, sink) => {
        const id = localNode(host, p.node)
        const after = p.after ?? (await host.inbox.info(id)).cursor
        await follow(host, id, after, sink, p.framing === 'binary')
      }
    },
    ack: {
      call: async (p) => ({ cursor: (await readUpTo(host, localNode(host, p.node), p.seq, 'host')).cursor })
    },
    card: {
      call: async (p) => {
        const t = await host.resolver.resolve(p.target)
        if (t.kind === 'remote') return t.card.card
        // an a2a node's card is the agent's own, as fetched when it was added
        return t.kind === 'a2a' ? t.node.record.a2a?.card ?? {} : host.cards.cardOf(t.node)
      }
    },
    'outbox.dead': {
      call: async (p) => (await host.outbox.deadLetters(p.limit ?? 1000)).map((d) => ({ ...d, packet: undefined, to_name: host.label(d.to), from_name: host.label(d.from) }))
    },
    shutdown: { call: async () => { setImmediate(shutdown); return { stopping: true } } },
    ...aclMethods(host),
    ...discoveryMethods(host),
    ...inboxMethods(host),
    ...consumptionMethods(host),
    ...permissionMethods(host),
    ...agentsMethods(host),
    ...nodeMethods(host, host.agents),
    ...peerMethods(host)
  })
}
