import { z } from 'zod'
import { method, type MethodTable, type StreamSink } from '../control/server.js'
import { PAYLOAD_FIELDS, PRIORITIES, ZONES } from '../packet/types.js'
import { UnknownNodeError } from '../util/errors.js'
import type { Host } from './host.js'
import { ensureNode } from './nodes.js'
import { renderEntry } from './render.js'
import { resolveTarget } from './resolve.js'
import { sendMessage } from './send.js'
import { hostStatus, nodeList } from './status.js'
import { aclMethods } from './api-acl.js'
import { agentsMethods } from './api-agents.js'
import { discoveryMethods } from './api-discovery.js'
import { mcpMethods } from './api-mcp.js'

const name = z.string().min(1).max(256)
const seq = z.number().int().min(0)

const payloadSchema = z.object(Object.fromEntries(PAYLOAD_FIELDS.map((f) => [f, f === 'options' ? z.array(z.string()).optional() : z.string().optional()]))).strict()

const sendSchema = z.object({
  as: name,
  to: name,
  text: z.string().optional(),
  signal: z.string().optional(),
  payload: payloadSchema.optional(),
  conversation_id: z.string().min(1).max(256).optional(),
  in_reply_to: z.string().min(1).max(256).optional(),
  session_id: z.string().min(1).max(256).optional(),
  return_to: z.string().optional(),
  priority: z.enum(PRIORITIES).optional(),
  requires_reply: z.boolean().optional(),
  zone: z.enum(ZONES).optional(),
  files: z.array(z.string()).optional(),
  ttl_ms: z.number().int().positive().optional()
}).strict()

const FOLLOW_BATCH = 256

function localNode (host: Host, n: string): string {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return node.record.id
}

/** Replay everything after the cursor, then live packets, at the consumer's pace. */
async function follow (host: Host, nodeId: string, after: number, sink: StreamSink): Promise<void> {
  let cursor = after
  const label = (id: string): string => host.label(id)
  let wake: (() => void) | undefined
  const onAppend = (id: string): void => { if (id === nodeId) wake?.() }
  host.inbox.on('append', onAppend)
  // once caught up, new entries come from the inbox's in-memory tail, not a store read
  const unwatch = host.inbox.watch(nodeId)
  sink.signal.addEventListener('abort', () => wake?.())
  try {
    while (!sink.signal.aborted) {
      const waiting = new Promise<void>((resolve) => { wake = resolve })
      const entries = await host.inbox.read(nodeId, cursor, FOLLOW_BATCH)
      if (entries.length > 0) {
        // one socket write per page; the next page is read once the socket has room
        const events = entries.map((e) => renderEntry(e, label))
        if (sink.emitMany !== undefined) await sink.emitMany(events)
        else for (const ev of events) await sink.emit(ev)
        cursor = entries[entries.length - 1].seq
      }
      if (entries.length < FOLLOW_BATCH) await waiting
    }
  } finally {
    host.inbox.off('append', onAppend)
    unwatch()
  }
}

export function controlMethods (host: Host, shutdown: () => void): MethodTable {
  return {
    status: method({ params: z.object({}).strict(), call: async () => await hostStatus(host) }),
    id: method({
      params: z.object({}).strict(),
      call: async () => ({ peerId: host.libp2p.peerId.toString(), addrs: host.libp2p.getMultiaddrs().map(String) })
    }),
    nodes: method({ params: z.object({}).strict(), call: async () => nodeList(host) }),
    'node.add': method({
      params: z.object({ name, parent: name.optional() }).strict(),
      call: async (p) => {
        const node = await host.addNode(p.name, p.parent)
        return { id: node.record.id, name: node.record.name, parent: node.record.parent, depth: node.record.depth }
      }
    }),
    'node.ensure': method({
      params: z.object({ name }).strict(),
      call: async (p) => {
        const node = await ensureNode(host, p.name)
        return { id: node.record.id, name: node.record.name }
      }
    }),
    send: method({ params: sendSchema, call: async (p) => await sendMessage(host, p) }),
    'inbox.read': method({
      params: z.object({ node: name, after: seq.optional(), limit: z.number().int().min(1).max(10_000).optional() }).strict(),
      call: async (p) => {
        const id = localNode(host, p.node)
        const after = p.after ?? (await host.inbox.info(id)).cursor
        const entries = await host.inbox.read(id, after, p.limit ?? 1000)
        return entries.map((e) => renderEntry(e, (x) => host.label(x)))
      }
    }),
    'inbox.follow': method({
      params: z.object({ node: name, after: seq.optional() }).strict(),
      stream: async (p, sink) => {
        const id = localNode(host, p.node)
        const after = p.after ?? (await host.inbox.info(id)).cursor
        await follow(host, id, after, sink)
      }
    }),
    ack: method({
      params: z.object({ node: name, seq }).strict(),
      call: async (p) => ({ cursor: await host.inbox.ack(localNode(host, p.node), p.seq) })
    }),
    card: method({
      params: z.object({ target: name }).strict(),
      call: async (p) => {
        const t = await resolveTarget(host, p.target)
        return t.kind === 'local' ? host.cards.cardOf(t.node) : t.card.card
      }
    }),
    join: method({ params: z.object({ addr: z.string().min(1) }).strict(), call: async (p) => ({ peerId: await host.join(p.addr) }) }),
    'outbox.dead': method({
      params: z.object({ limit: z.number().int().min(1).max(100_000).optional() }).strict(),
      call: async (p) => (await host.outbox.deadLetters(p.limit ?? 1000)).map((d) => ({ ...d, packet: undefined, to_name: host.label(d.to), from_name: host.label(d.from) }))
    }),
    shutdown: method({ params: z.object({}).strict(), call: async () => { setImmediate(shutdown); return { stopping: true } } }),
    ...aclMethods(host),
    ...discoveryMethods(host),
    ...mcpMethods(host),
    ...agentsMethods(host)
  }
}
