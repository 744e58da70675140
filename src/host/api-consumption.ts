import type { Handlers } from '../control/server.js'
import type { InboxState } from '../control/wire.js'
import { renderEntry, type RenderedPacket } from '../packet/render.js'
import type { ReadOutcome } from '../store/consumption.js'
import { UnknownNodeError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { Components } from './components.js'

type Host = Pick<Components, 'nodes' | 'inbox' | 'consumption' | 'label'>

// Daemon side of consumption (docs/DELIVERY.md "Three states"): a session's
// attachment, what was pushed to it, and what it read. Only reading moves a
// node's cursor.

/** entries read per page while collecting unread messages */
const PAGE = 256
/** at most this many read marks above the cursor are sent to an attaching session */
const READ_ABOVE_MAX = 100_000
function localId (host: Host, n: string): string {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return node.record.id
}

/** Mark everything up to `seq` read (`amesh ack`, `amesh inbox --ack`). */
export async function readUpTo (host: Pick<Components, 'consumption'>, nodeId: string, upto: number, by: string): Promise<ReadOutcome> {
  return await host.consumption.markRead(nodeId, { upto }, by)
}

async function seqsOfIds (host: Host, nodeId: string, ids: string[]): Promise<number[]> {
  const out: number[] = []
  for (const id of ids) {
    const where = await host.inbox.locate(id)
    if (where?.nodeId === nodeId) out.push(where.seq)
  }
  return out
}

/** Unread messages of a node, oldest first, at most `limit`. */
async function unreadPackets (host: Host, nodeId: string, limit: number): Promise<RenderedPacket[]> {
  const read = await host.consumption.readAbove(nodeId)
  let after = (await host.inbox.info(nodeId)).cursor
  const out: RenderedPacket[] = []
  while (out.length < limit) {
    const entries = await host.inbox.read(nodeId, after, PAGE)
    for (const e of entries) {
      if (!read.has(e.seq) && out.length < limit) out.push(renderEntry(e, (x) => host.label(x)))
      after = e.seq
    }
    if (entries.length < PAGE) break
  }
  return out
}

async function nodeState (host: Host, nodeId: string): Promise<InboxState> {
  const info = await host.inbox.info(nodeId)
  const presence = await host.consumption.presence(nodeId)
  return {
    last: info.last,
    cursor: info.cursor,
    unread: await host.consumption.unread(nodeId),
    attached: host.consumption.attachedNow(nodeId),
    last_read: presence.last_read,
    last_attach: presence.last_attach
  }
}

/** Control methods of consumption: attach, pushed, read, unread, state. */
export function consumptionMethods (host: Host): Handlers<'inbox.attach' | 'inbox.pushed' | 'inbox.mark_read' | 'inbox.unread' | 'inbox.state'> {
  return {
    /**
     * A session attaches: the first event says where the node stands (cursor,
     * last, unread, the seqs above the cursor already read); the node counts
     * as attached until the stream ends.
     */
    'inbox.attach': {
      stream: async (p, sink) => {
        const nodeId = localId(host, p.node)
        host.consumption.attach(nodeId, 1)
        try {
          await host.consumption.attached(nodeId)
          const info = await host.inbox.info(nodeId)
          const above = [...await host.consumption.readAbove(nodeId)].slice(0, READ_ABOVE_MAX)
          await sink.emit({ attachment: ulid(), cursor: info.cursor, last: info.last, unread: info.last - info.cursor - above.length, read_above: above })
          if (!sink.signal.aborted) await new Promise<void>((resolve) => sink.signal.addEventListener('abort', () => resolve(), { once: true }))
        } finally {
          host.consumption.attach(nodeId, -1)
        }
      }
    },
    /** Channel notifications for these seqs were written to the attachment (pushed, not read). */
    'inbox.pushed': {
      call: async (p) => {
        await host.consumption.markPushed(localId(host, p.node), p.seqs, p.attachment)
        return { pushed: p.seqs.length }
      }
    },
    /** The session handled these messages: everything up to `upto`, and/or single ones by id or seq. */
    'inbox.mark_read': {
      call: async (p) => {
        const nodeId = localId(host, p.node)
        const seqs = [...(p.seqs ?? []), ...await seqsOfIds(host, nodeId, p.ids ?? [])]
        const r = await host.consumption.markRead(nodeId, { upto: p.upto, seqs }, p.by)
        return { cursor: r.cursor, newly_read: r.read.length, unread: await host.consumption.unread(nodeId) }
      }
    },
    /** Unread messages, oldest first; with `take`, they are marked read (the `inbox` tool). */
    'inbox.unread': {
      call: async (p) => {
        const nodeId = localId(host, p.node)
        const packets = await unreadPackets(host, nodeId, p.limit ?? 20)
        if (p.take === true && packets.length > 0) await host.consumption.markRead(nodeId, { seqs: packets.map((x) => x.seq) }, 'inbox')
        return packets
      }
    },
    /** Where a node stands: cursor, unread, attached sessions, last read and attach. */
    'inbox.state': {
      call: async (p) => await nodeState(host, localId(host, p.node))
    }
  }
}
