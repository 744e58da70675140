import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { resolve as resolvePath } from 'node:path'
import { z } from 'zod'
import type { ParamsOf } from '../control/methods.js'
import { BROADCAST_TO } from '../control/send-params.js'
import { TEXT_FIELD } from '../packet/rules.js'
import { PRIORITIES, SIGNALS, ZONES, type JsonValue, type OptionValue, type Signal } from '../packet/types.js'
import { MAX_TEXT_FIELD } from '../packet/validate.js'
import { markRead, registerConsumption } from './tools-consumption.js'
import { guarded, strictArgs, type ToolContext } from './tool-kit.js'

export type { ToolContext } from './tool-kit.js'

/** context, decision, result: any JSON value (an object or array is kept as structure, not flattened to a string) */
const jsonValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.unknown())])
const option = z.union([z.string(), z.object({ id: z.string().min(1), label: z.string(), description: z.string().optional() }).strict()])

const payloadShape = {
  text: z.string().max(MAX_TEXT_FIELD).optional().describe('the message text (for signals without a text field it fills the main field: result for RETURN, context otherwise)'),
  signal: z.enum(SIGNALS).optional().describe('MESSAGE (default), SPAWN, RETURN, BLOCKED_ON, CHECKPOINT, HANDOFF, ESCALATE, ERROR'),
  context: jsonValue.optional().describe('SPAWN, BLOCKED_ON, CHECKPOINT, HANDOFF, ERROR (and MESSAGE) carry context: a string or any JSON value (e.g. {"files": [...], "notes": {...}})'),
  decision: jsonValue.optional().describe('HANDOFF carries a decision (string or JSON)'),
  options: z.array(option).optional().describe('ESCALATE carries the options to choose from: strings or {id, label, description?}'),
  result: jsonValue.optional().describe('RETURN carries a result (string or JSON)'),
  requires_reply: z.boolean().optional().describe('the sender waits for an answer'),
  priority: z.enum(PRIORITIES).optional(),
  no_receipt: z.boolean().optional().describe('ask for no receipts: the receiving host reports neither pushed nor read')
}

interface PayloadArgs { text?: string, signal?: Signal, context?: unknown, decision?: unknown, options?: OptionValue[], result?: unknown }

type SendPayload = NonNullable<ParamsOf<'send'>['payload']>

function payloadOf (a: PayloadArgs): { signal: Signal, payload: SendPayload } {
  const signal = a.signal ?? 'MESSAGE'
  const payload: SendPayload = {}
  // JSON values as the tool call carried them (the daemon checks depth and size)
  if (a.context !== undefined) payload.context = a.context as JsonValue
  if (a.decision !== undefined) payload.decision = a.decision as JsonValue
  if (a.options !== undefined) payload.options = a.options
  if (a.result !== undefined) payload.result = a.result as JsonValue
  if (a.text !== undefined) {
    const field = TEXT_FIELD[signal] as 'text' | 'context' | 'result'
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
    description: 'Send a message to a node on the mesh (by name or node id). Returns {id, state}: "delivered" (local) or "queued" (durably on its way to another host); pass id to the receipt tool to see whether it was pushed and read.',
    inputSchema: strictArgs({
      to: z.string().min(1).describe('node name or did:key id; "broadcast" sends to your group (see the broadcast tool)'),
      ...payloadShape,
      conversation_id: z.string().min(1).max(256).optional().describe('thread id to file this message under'),
      in_reply_to: z.string().min(1).max(256).optional().describe('the msg_id this answers (prefer the reply tool)')
    })
  }, async (a) => await guarded(async () => {
    if (a.to === BROADCAST_TO) return await broadcastTo(ctx, undefined, a)
    const target = await ctx.link.call('node.resolve', { target: a.to })
    const { signal, payload } = payloadOf(a)
    return await guardedSend(ctx, target.id, a.conversation_id, {
      to: target.id, signal, payload, conversation_id: a.conversation_id, in_reply_to: a.in_reply_to, requires_reply: a.requires_reply, priority: a.priority, no_receipt: a.no_receipt
    })
  }))

  mcp.registerTool('reply', {
    description: 'Reply to a message you received (by its msg_id): goes to its sender, keeps its conversation_id and sets in_reply_to, and marks that message read. Returns {id, state} (pass id to the receipt tool).',
    inputSchema: strictArgs({ msg_id: z.string().min(1).max(256).describe('the msg_id attribute of the channel event'), ...payloadShape })
  }, async (a) => await guarded(async () => {
    const original = await ctx.link.call('inbox.get', { node: ctx.node, id: a.msg_id })
    const conversation = typeof original.conversation_id === 'string' ? original.conversation_id : original.id
    const { signal, payload } = payloadOf(a)
    const sent = await guardedSend(ctx, original.from_id, conversation, {
      to: original.from_id, signal, payload, conversation_id: conversation, in_reply_to: original.id, requires_reply: a.requires_reply, priority: a.priority, no_receipt: a.no_receipt
    })
    await markRead(ctx, { seqs: [original.seq] }, 'reply') // replying is handling it: the message is read
    return sent
  }))
}

/** A broadcast through the loop guard (the group counts as one peer). */
async function broadcastTo (ctx: ToolContext, group: string | undefined, a: PayloadArgs & { conversation_id?: string, requires_reply?: boolean, priority?: typeof PRIORITIES[number] }): Promise<unknown> {
  const { signal, payload } = payloadOf(a)
  return await guardedSend(ctx, `${BROADCAST_TO}:${group ?? ''}`, a.conversation_id, {
    to: BROADCAST_TO, group, signal, payload, conversation_id: a.conversation_id, requires_reply: a.requires_reply, priority: a.priority
  })
}

function registerBroadcast (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('broadcast', {
    description: 'Send one message to every member of a group: by default your own (your parent, siblings and children), or with group the group that node heads. Each member gets its own copy, checked by its own permissions. Returns {broadcast, members: [{to, result: delivered | queued | refused: CODE, id}]}.',
    inputSchema: strictArgs({
      group: z.string().min(1).max(256).optional().describe('the node whose group (it and its children) to send to; default: your own group'),
      ...payloadShape,
      conversation_id: z.string().min(1).max(256).optional().describe('thread id to file this message under')
    })
  }, async (a) => await guarded(async () => await broadcastTo(ctx, a.group, a)))
}

function registerViews (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('nodes', {
    description: 'The nodes this node can see (local and on other hosts), each with may_message and, when not, the reason.',
    inputSchema: strictArgs({})
  }, async () => await guarded(async () => await ctx.link.call('nodes.reachable', { as: ctx.node })))
}

function registerAuthority (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('grant', {
    description: 'Grant another node the right to message this node (a capability token issued by this node).',
    inputSchema: strictArgs({
      to: z.string().min(1).describe('the node allowed to send (name or id)'),
      signals: z.array(z.enum(SIGNALS)).optional().describe('signals it may send (default: all)'),
      zones: z.array(z.enum(ZONES)).optional().describe('zones it may use (default: all)'),
      expires_ms: z.number().int().positive().optional().describe('lifetime in milliseconds')
    })
  }, async (a) => await guarded(async () => await ctx.link.call('grant', { as: ctx.node, to: a.to, signals: a.signals, zones: a.zones, expires_ms: a.expires_ms })))

  mcp.registerTool('revoke', {
    description: 'Revoke a grant this node issued, by its token id.',
    inputSchema: strictArgs({ token_id: z.string().min(1).describe('the token_id the grant returned') })
  }, async (a) => await guarded(async () => await ctx.link.call('revoke', { as: ctx.node, token_id: a.token_id })))

  for (const behavior of ['allow', 'deny'] as const) {
    mcp.registerTool(behavior === 'allow' ? 'approve' : 'deny', {
      description: `${behavior === 'allow' ? 'Approve' : 'Deny'} a permission request another session relayed to you (an ESCALATE with permission_request_id).`,
      inputSchema: strictArgs({ request_id: z.string().regex(/^[a-z]{1,32}$/).describe('the permission_request_id attribute') })
    }, async (a) => await guarded(async () => await ctx.link.call('permission.verdict', { as: ctx.node, request_id: a.request_id, behavior })))
  }
}

function registerSpawn (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('spawn', {
    description: 'Start a managed node (a worker) from a YAML spec file, with this node as its parent: you and it (and its siblings) may message each other with no grant. A spec with host: runs it on another host (needs that host\'s grant). Returns {name, id, state, ...}.',
    inputSchema: strictArgs({
      spec: z.string().min(1).describe('path of the spec file (relative to this session\'s directory)'),
      name: z.string().min(1).max(64).optional().describe('node name, overriding the spec\'s name (to start several from one spec)')
    })
  }, async (a) => await guarded(async () => await ctx.link.call('agent.start', { path: resolvePath(a.spec), name: a.name, parent: ctx.node })))
}

export function registerTools (mcp: McpServer, ctx: ToolContext): void {
  registerSpawn(mcp, ctx)
  registerMessaging(mcp, ctx)
  registerBroadcast(mcp, ctx)
  registerViews(mcp, ctx)
  registerConsumption(mcp, ctx)
  registerAuthority(mcp, ctx)
}
