import { z } from 'zod'
import { method, type MethodTable } from '../control/server.js'
import { decodePacket } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import { InvalidArgumentError, UnknownNodeError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { Components } from './components.js'
import { renderEntry, type RenderedPacket } from '../packet/render.js'
import { nodeList } from './status.js'

type McpApiComponents = Pick<Components, 'nodes' | 'inbox' | 'db' | 'label' | 'resolver' | 'sender' | 'acl' | 'directory' | 'libp2p'>

// Daemon-side helpers of the Claude Code face (`amesh mcp`, `amesh approve|deny`).
// The permission-relay wire format is defined here and in src/mcp/permission.ts:
// the request is an ESCALATE whose conversation_id is `permission:<request_id>`;
// the verdict is a MESSAGE replying to it (in_reply_to) with text `allow <id>` / `deny <id>`.

export const PERMISSION_CONVERSATION_PREFIX = 'permission:'
const SCAN_BATCH = 1000
const name = z.string().min(1).max(256)
const requestId = z.string().regex(/^[a-z]{1,32}$/, 'a request id is lowercase letters')

function localNode (host: Pick<Components, 'nodes'>, n: string): { id: string, name: string } {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return { id: node.record.id, name: node.record.name }
}

/** The newest permission ESCALATE for a request id in one node's retained inbox. */
async function findEscalate (host: Pick<Components, 'inbox'>, nodeId: string, rid: string): Promise<Packet | undefined> {
  const conversation = PERMISSION_CONVERSATION_PREFIX + rid
  let found: Packet | undefined
  let after = 0
  for (;;) {
    const entries = await host.inbox.read(nodeId, after, SCAN_BATCH)
    for (const e of entries) {
      const p = decodePacket(e.packet)
      if (p.signal === 'ESCALATE' && p.conversation_id === conversation) found = p
      after = e.seq
    }
    if (entries.length < SCAN_BATCH) return found
  }
}

async function verdict (host: McpApiComponents, p: { as?: string, request_id: string, behavior: 'allow' | 'deny' }): Promise<Record<string, unknown>> {
  const candidates = p.as !== undefined ? [localNode(host, p.as)] : host.nodes.list().map((n) => ({ id: n.record.id, name: n.record.name }))
  const matches: Array<{ node: { id: string, name: string }, escalate: Packet }> = []
  for (const node of candidates) {
    const escalate = await findEscalate(host, node.id, p.request_id)
    if (escalate !== undefined) matches.push({ node, escalate })
  }
  if (matches.length === 0) {
    throw new InvalidArgumentError(`no permission request ${p.request_id} in the inbox of ${p.as ?? 'any node on this host'}`)
  }
  if (matches.length > 1) {
    throw new InvalidArgumentError(`permission request ${p.request_id} is in the inboxes of ${matches.map((m) => m.node.name).join(', ')}; say which with --as`)
  }
  const { node, escalate } = matches[0]
  const r = await host.sender.send({
    as: node.name,
    to: escalate.from,
    text: `${p.behavior} ${p.request_id}`,
    in_reply_to: escalate.id,
    conversation_id: escalate.conversation_id
  })
  return { ...r, as: node.name, to: host.label(escalate.from), to_id: escalate.from, request_id: p.request_id, behavior: p.behavior }
}

/**
 * Whether `from` may send a MESSAGE to `to` right now: the sender-side ACL
 * decision on a probe packet (no notice, nothing sent).
 */
async function mayMessage (host: McpApiComponents, from: string, to: string): Promise<{ may_message: boolean, reason?: string }> {
  const sender = host.nodes.get(from)
  if (sender === undefined) return { may_message: false, reason: `no node named ${from} on this host` }
  try {
    const target = await host.resolver.resolve(to)
    const probe: Packet = { id: ulid(), from: sender.record.id, to: target.id, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: '' }, ts: Date.now() }
    const decision = host.acl.probeSend(probe, sender, target)
    return decision.allow ? { may_message: true } : { may_message: false, reason: `${decision.code}: ${decision.reason}` }
  } catch (err) {
    return { may_message: false, reason: err instanceof Error ? err.message : String(err) }
  }
}

/** Control methods of the mcp capability. */
export function mcpMethods (host: McpApiComponents): MethodTable {
  return {
    /** Resolve a name or id to {id, name, local} (cards, card exchange, DHT). */
    'mcp.resolve': method({
      params: z.object({ target: name }).strict(),
      call: async (p) => {
        const t = await host.resolver.resolve(p.target)
        return { id: t.id, name: t.name, local: t.kind === 'local' }
      }
    }),
    /** The node's most recent packets (acked or not), oldest first. */
    'mcp.recent': method({
      params: z.object({ node: name, limit: z.number().int().min(1).max(1000).optional() }).strict(),
      call: async (p): Promise<RenderedPacket[]> => {
        const id = localNode(host, p.node).id
        const info = await host.inbox.info(id)
        const limit = p.limit ?? 20
        const entries = await host.inbox.read(id, Math.max(0, info.last - limit), limit)
        return entries.map((e) => renderEntry(e, (x) => host.label(x)))
      }
    }),
    /** One packet of the node's retained inbox, by message id. */
    'mcp.packet': method({
      params: z.object({ node: name, id: z.string().min(1).max(256) }).strict(),
      call: async (p): Promise<RenderedPacket> => {
        const nodeId = localNode(host, p.node).id
        const entry = await host.inbox.entryById(nodeId, p.id)
        if (entry === undefined) throw new InvalidArgumentError(`no message ${p.id} in the inbox of ${p.node}`)
        return renderEntry(entry, (x) => host.label(x))
      }
    }),
    /** The cards known here, each with whether `as` may message it. */
    'mcp.nodes': method({
      params: z.object({ as: name }).strict(),
      call: async (p) => {
        const out = []
        for (const n of nodeList(host)) {
          if (n.name === p.as && n.local === true) continue
          out.push({ ...n, ...await mayMessage(host, p.as, String(n.id)) })
        }
        return out
      }
    }),
    /** Answer a relayed permission request: a verdict MESSAGE to the ESCALATE's sender. */
    'mcp.verdict': method({
      params: z.object({ as: name.optional(), request_id: requestId, behavior: z.enum(['allow', 'deny']) }).strict(),
      call: async (p) => await verdict(host, p)
    })
  }
}
