import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { resolve as resolvePath } from 'node:path'
import { z } from 'zod'
import type { ParamsOf } from '../control/methods.js'
import { SIGNAL_RULES } from '../packet/rules.js'
import { PRIORITIES, SIGNALS, ZONES, type Signal } from '../packet/types.js'
import { errorCode, errorMessage } from '../util/errors.js'
import { INBOX_DEFAULT } from './constants.js'
import type { DaemonLink } from './link.js'
import type { LoopGuard } from './loop-guard.js'
import { channelEvent } from './render.js'

export interface ToolContext {
  link: DaemonLink
  node: string
  guard: LoopGuard
}

function ok (value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }] }
}

function failure (err: unknown): CallToolResult {
  const code = errorCode(err)
  const prefix = code === 'INTERNAL' ? '' : `${code}: `
  return { content: [{ type: 'text', text: prefix + errorMessage(err) }], isError: true }
}

/** Run a tool body; every failure becomes an isError result (tools never throw). */
async function guarded (body: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await body())
  } catch (err) {
    return failure(err)
  }
}

const payloadShape = {
  text: z.string().max(1_000_000).optional().describe('the message text (for signals without a text field it fills the main field: result for RETURN, context otherwise)'),
  signal: z.enum(SIGNALS).optional().describe('MESSAGE (default), SPAWN, RETURN, BLOCKED_ON, CHECKPOINT, HANDOFF, ESCALATE, ERROR'),
  context: z.string().optional().describe('SPAWN, BLOCKED_ON, CHECKPOINT, HANDOFF, ERROR (and MESSAGE) carry context'),
  decision: z.string().optional().describe('HANDOFF carries a decision'),
  options: z.array(z.string()).optional().describe('ESCALATE carries the options to choose from'),
  result: z.string().optional().describe('RETURN carries a result'),
  requires_reply: z.boolean().optional().describe('the sender waits for an answer'),
  priority: z.enum(PRIORITIES).optional()
}

interface PayloadArgs { text?: string, signal?: Signal, context?: string, decision?: string, options?: string[], result?: string }

type SendPayload = NonNullable<ParamsOf<'send'>['payload']>

function payloadOf (a: PayloadArgs): { signal: Signal, payload: SendPayload } {
  const signal = a.signal ?? 'MESSAGE'
  const payload: SendPayload = {}
  if (a.context !== undefined) payload.context = a.context
  if (a.decision !== undefined) payload.decision = a.decision
  if (a.options !== undefined) payload.options = a.options
  if (a.result !== undefined) payload.result = a.result
  if (a.text !== undefined) {
    const allowed = SIGNAL_RULES[signal].allowed
    const field = allowed.includes('text') ? 'text' : allowed.includes('result') ? 'result' : 'context'
    if (payload[field] === undefined) payload[field] = a.text
    else payload.text = a.text
  }
  return { signal, payload }
}

/** Send with the loop guard: check, send, record. */
async function guardedSend (ctx: ToolContext, peer: string, conversation: string | undefined, req: Omit<ParamsOf<'send'>, 'as'>): Promise<unknown> {
  ctx.guard.check(peer, conversation)
  const r = await ctx.link.call('send', { as: ctx.node, ...req })
  ctx.guard.sent(peer, conversation)
  return r
}

function registerMessaging (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('send', {
    description: 'Send a message to a node on the mesh (by name or node id). Returns {id, state}: "delivered" (local) or "queued" (durably on its way to another host).',
    inputSchema: {
      to: z.string().min(1).describe('node name or did:key id'),
      ...payloadShape,
      conversation_id: z.string().min(1).max(256).optional().describe('thread id to file this message under'),
      in_reply_to: z.string().min(1).max(256).optional().describe('the msg_id this answers (prefer the reply tool)')
    }
  }, async (a) => await guarded(async () => {
    const target = await ctx.link.call('node.resolve', { target: a.to })
    const { signal, payload } = payloadOf(a)
    return await guardedSend(ctx, target.id, a.conversation_id, {
      to: target.id, signal, payload, conversation_id: a.conversation_id, in_reply_to: a.in_reply_to, requires_reply: a.requires_reply, priority: a.priority
    })
  }))

  mcp.registerTool('reply', {
    description: 'Reply to a message you received (by its msg_id): goes to its sender, keeps its conversation_id and sets in_reply_to.',
    inputSchema: { msg_id: z.string().min(1).max(256).describe('the msg_id attribute of the channel event'), ...payloadShape }
  }, async (a) => await guarded(async () => {
    const original = await ctx.link.call('inbox.get', { node: ctx.node, id: a.msg_id })
    const conversation = typeof original.conversation_id === 'string' ? original.conversation_id : original.id
    const { signal, payload } = payloadOf(a)
    return await guardedSend(ctx, original.from_id, conversation, {
      to: original.from_id, signal, payload, conversation_id: conversation, in_reply_to: original.id, requires_reply: a.requires_reply, priority: a.priority
    })
  }))
}

function registerViews (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('nodes', {
    description: 'The nodes this node can see (local and on other hosts), each with may_message and, when not, the reason.',
    inputSchema: {}
  }, async () => await guarded(async () => await ctx.link.call('nodes.reachable', { as: ctx.node })))

  mcp.registerTool('inbox', {
    description: 'Re-read your most recent messages (already delivered to this session or not), oldest first.',
    inputSchema: { limit: z.number().int().min(1).max(1000).optional().describe(`how many (default ${INBOX_DEFAULT})`) }
  }, async (a) => await guarded(async () => {
    const packets = await ctx.link.call('inbox.recent', { node: ctx.node, limit: a.limit ?? INBOX_DEFAULT })
    return packets.map((p) => { const e = channelEvent(p); return { ...e.meta, content: e.content } })
  }))

  mcp.registerTool('status', {
    description: 'This node (id, inbox depth), its host (peer id, addresses), connected peers and outbox queue depths.',
    inputSchema: {}
  }, async () => await guarded(async () => {
    const s = await ctx.link.call('status')
    const self = s.nodes.find((n) => n.name === ctx.node)
    return { node: self, host: { peerId: s.peerId, addrs: s.addrs, pid: s.pid, uptime_ms: s.uptime_ms }, peers: s.peers, outbox: s.outbox, links: s.links }
  }))
}

function registerAuthority (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('grant', {
    description: 'Grant another node the right to message this node (a capability token issued by this node).',
    inputSchema: {
      to: z.string().min(1).describe('the node allowed to send (name or id)'),
      signals: z.array(z.enum(SIGNALS)).optional().describe('signals it may send (default: all)'),
      zones: z.array(z.enum(ZONES)).optional().describe('zones it may use (default: all)'),
      expires_ms: z.number().int().positive().optional().describe('lifetime in milliseconds')
    }
  }, async (a) => await guarded(async () => await ctx.link.call('grant', { as: ctx.node, to: a.to, signals: a.signals, zones: a.zones, expires_ms: a.expires_ms })))

  mcp.registerTool('revoke', {
    description: 'Revoke a grant this node issued, by its token id.',
    inputSchema: { token_id: z.string().min(1).describe('the token_id the grant returned') }
  }, async (a) => await guarded(async () => await ctx.link.call('revoke', { as: ctx.node, token_id: a.token_id })))

  for (const behavior of ['allow', 'deny'] as const) {
    mcp.registerTool(behavior === 'allow' ? 'approve' : 'deny', {
      description: `${behavior === 'allow' ? 'Approve' : 'Deny'} a permission request another session relayed to you (an ESCALATE with permission_request_id).`,
      inputSchema: { request_id: z.string().regex(/^[a-z]{1,32}$/).describe('the permission_request_id attribute') }
    }, async (a) => await guarded(async () => await ctx.link.call('permission.verdict', { as: ctx.node, request_id: a.request_id, behavior })))
  }
}

function registerSpawn (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('spawn', {
    description: 'Start a managed node (a worker) from a YAML spec file, with this node as its parent: you and it (and its siblings) may message each other with no grant. A spec with host: runs it on another host (needs that host\'s grant). Returns {name, id, state, ...}.',
    inputSchema: {
      spec: z.string().min(1).describe('path of the spec file (relative to this session\'s directory)'),
      name: z.string().min(1).max(64).optional().describe('node name, overriding the spec\'s name (to start several from one spec)')
    }
  }, async (a) => await guarded(async () => await ctx.link.call('agent.start', { path: resolvePath(a.spec), name: a.name, parent: ctx.node })))
}

export function registerTools (mcp: McpServer, ctx: ToolContext): void {
  registerSpawn(mcp, ctx)
  registerMessaging(mcp, ctx)
  registerViews(mcp, ctx)
  registerAuthority(mcp, ctx)
}
