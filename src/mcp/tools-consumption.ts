import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { MarkReadResult, RenderedPacket } from '../control/wire.js'
import { INBOX_DEFAULT } from './constants.js'
import { channelEvent } from './render.js'
import { guarded, strictArgs, type ToolContext } from './tool-kit.js'

// The tools that read (ack, inbox) and show state (status, receipt). See
// docs/DELIVERY.md: a push never reads; these do.

export type ReadBy = 'reply' | 'ack' | 'inbox'

/** Mark messages read; nothing (undefined) in a tools-only session, whose inbox another consumer reads. */
export async function markRead (ctx: ToolContext, req: { upto?: number, ids?: string[], seqs?: number[] }, by: ReadBy): Promise<MarkReadResult | undefined> {
  if (!ctx.readsInbox) return undefined
  return await ctx.link.call('inbox.mark_read', { node: ctx.node, ...req, by })
}

function asItem (p: RenderedPacket): Record<string, string> {
  const e = channelEvent(p)
  return { ...e.meta, content: e.content }
}

function registerAck (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('ack', {
    description: 'Mark messages handled (read): every message up to seq N, and/or single ones by msg_id. A channel event you saw but did not reply to or ack stays unread and is shown again to the next session of this node.',
    inputSchema: strictArgs({
      upto_seq: z.number().int().min(1).optional().describe('mark every message with seq <= this read'),
      msg_ids: z.array(z.string().min(1).max(256)).max(1000).optional().describe('mark these messages read')
    })
  }, async (a) => await guarded(async () => {
    if (a.upto_seq === undefined && (a.msg_ids === undefined || a.msg_ids.length === 0)) throw new Error('give upto_seq or msg_ids')
    return await markRead(ctx, { upto: a.upto_seq, ids: a.msg_ids }, 'ack')
  }))
}

function registerInbox (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('inbox', {
    description: ctx.readsInbox
      ? 'Your unread messages, oldest first. Returning them marks them read (handled): call it when you will act on them. With recent: true, the most recent messages read or not, marking nothing.'
      : 'Your unread messages, oldest first (this session marks nothing read: the bridge that runs you handles them). With recent: true, the most recent messages read or not.',
    inputSchema: strictArgs({
      limit: z.number().int().min(1).max(1000).optional().describe(`how many (default ${INBOX_DEFAULT})`),
      recent: z.boolean().optional().describe('re-read the most recent messages (read or not) instead; marks nothing')
    })
  }, async (a) => await guarded(async () => {
    const limit = a.limit ?? INBOX_DEFAULT
    if (a.recent === true) return (await ctx.link.call('inbox.recent', { node: ctx.node, limit })).map(asItem)
    return (await ctx.link.call('inbox.unread', { node: ctx.node, limit, take: ctx.readsInbox })).map(asItem)
  }))
}

function registerStatus (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('status', {
    description: 'This node (id, inbox: cursor, unread, sessions attached, last read), its host (peer id, addresses), connected peers and outbox queue depths.',
    inputSchema: strictArgs({})
  }, async () => await guarded(async () => {
    const s = await ctx.link.call('status')
    const self = s.nodes.find((n) => n.name === ctx.node)
    const state = await ctx.link.call('inbox.state', { node: ctx.node })
    return { node: self, consumption: { ...state, attachment: ctx.attachment?.attachment }, host: { peerId: s.peerId, addrs: s.addrs, pid: s.pid, uptime_ms: s.uptime_ms }, peers: s.peers, outbox: s.outbox, links: s.links }
  }))
}

function registerReceipt (mcp: McpServer, ctx: ToolContext): void {
  mcp.registerTool('receipt', {
    description: 'What became of a message you sent (the id send or reply returned): queued, delivered, pushed (shown to a session of the receiver), read (it handled it), refused or dead (with the reason), each with its time.',
    inputSchema: strictArgs({ msg_id: z.string().min(1).max(256).describe('the id send or reply returned') })
  }, async (a) => await guarded(async () => await ctx.link.call('receipt.get', { id: a.msg_id })))
}

export function registerConsumption (mcp: McpServer, ctx: ToolContext): void {
  registerReceipt(mcp, ctx)
  if (ctx.readsInbox) registerAck(mcp, ctx) // tools-only: the bridge acknowledges, not the agent
  registerInbox(mcp, ctx)
  registerStatus(mcp, ctx)
}
