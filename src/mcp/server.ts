import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { ConfigError, errorMessage } from '../util/errors.js'
import { createLogger, type Logger } from '../util/log.js'
import { ChannelPump } from './channel.js'
import { permissionRequestId } from '../control/permission.js'
import { CHANNEL_METHOD, PERMISSION_METHOD, PERMISSION_REQUEST_METHOD, SERVER_NAME } from './constants.js'
import { instructionsFor } from './instructions.js'
import { DaemonLink } from './link.js'
import { LoopGuard } from './loop-guard.js'
import type { McpOptions } from './options.js'
import { PermissionRelay, type PermissionVerdict } from './permission.js'
import type { ChannelEvent } from './render.js'
import { registerTools, type ToolContext } from './tools.js'

const VERSION = '0.1.0'

const PermissionRequestSchema = z.object({
  method: z.literal(PERMISSION_REQUEST_METHOD),
  params: z.object({
    request_id: z.string().regex(/^[a-z]{1,32}$/),
    tool_name: z.string(),
    description: z.string(),
    input_preview: z.string()
  }).passthrough()
})

interface NodeInfo { id: string, name: string, parent?: string }

/** Attach (register on first use) the node; with a parent, create it under that parent. */
async function attachNode (link: DaemonLink, opts: McpOptions): Promise<NodeInfo> {
  if (opts.parent !== undefined) {
    try {
      return await link.call('node.add', { name: opts.name, parent: opts.parent })
    } catch (err) {
      if (!(err instanceof Error && /already exists/.test(err.message))) throw err
    }
  }
  const node = await link.call('node.ensure', { name: opts.name })
  const listed = (await link.call('nodes')).find((n) => n.local && n.id === node.id)
  return { ...node, parent: listed?.parent }
}

/** Custom (Claude Code) notifications are outside the SDK's ServerNotification union. */
function custom (method: string, params: Record<string, unknown>): ServerNotification {
  return { method, params } as unknown as ServerNotification
}

export interface RunningMcp {
  /** resolves when the client went away (stdin closed) */
  closed: Promise<void>
  stop: () => Promise<void>
}

/** `amesh mcp`: the MCP stdio server of one Claude Code session. */
export async function runMcp (opts: McpOptions): Promise<RunningMcp> {
  const log: Logger = createLogger(`amesh:mcp:${opts.name}`, opts.logFile)
  const link = new DaemonLink(opts.home)
  const node = await attachNode(link, opts)
  const host = await link.call('id')
  const approver = opts.permissionRelay ? (opts.approver ?? opts.parent ?? node.parent) : undefined
  if (opts.permissionRelay && approver === undefined) {
    throw new ConfigError('permission relay needs an approver: --approver NODE, --parent NODE, or a node created with a parent')
  }
  const experimental: Record<string, object> = opts.toolsOnly === true ? {} : { 'claude/channel': {} }
  if (approver !== undefined) experimental['claude/channel/permission'] = {}
  const mcp = new McpServer({ name: SERVER_NAME, version: VERSION }, {
    capabilities: { experimental, tools: {} },
    instructions: instructionsFor({ node: node.name, nodeId: node.id, hostPeerId: host.peerId, approver, loopLimit: opts.loopLimit, loopWindow: opts.loopWindow })
  })
  const guard = new LoopGuard({ limit: opts.loopLimit, window: opts.loopWindow })
  const ctx: ToolContext = { link, node: node.name, guard, readsInbox: opts.toolsOnly !== true }
  registerTools(mcp, ctx)

  const notify = async (e: ChannelEvent): Promise<void> => { await mcp.server.notification(custom(CHANNEL_METHOD, { content: e.content, meta: e.meta })) }
  const relayVerdict = async (v: PermissionVerdict): Promise<void> => { await mcp.server.notification(custom(PERMISSION_METHOD, { request_id: v.request_id, behavior: v.behavior })) }
  const relay = approver === undefined ? undefined : new PermissionRelay({ link, node: node.name, approver, relay: relayVerdict, log })
  if (relay !== undefined) {
    mcp.server.setNotificationHandler(PermissionRequestSchema, async (n) => {
      await relay.request(n.params).catch((err) => log(`permission request ${n.params.request_id} not relayed: ${errorMessage(err)}`))
    })
    void relay.approver().catch((err) => log(`approver ${approver} not resolved yet: ${errorMessage(err)}`))
  }

  const pump = new ChannelPump({
    link,
    node: node.name,
    notify,
    consume: relay === undefined ? undefined : async (p) => await relay.consume(p),
    observe: (p) => {
      const conv = typeof p.conversation_id === 'string' ? p.conversation_id : p.id
      if (permissionRequestId(conv) === undefined) guard.inbound(p.from_id, conv)
    },
    repushLimit: opts.repushLimit,
    onAttach: (a) => { ctx.attachment = a },
    log
  })
  // pushing reads nothing (only reply, ack and inbox do), so a health check that initializes loses nothing;
  // a tools-only session (an ACP bridge) attaches nothing and is pushed nothing
  if (opts.toolsOnly !== true) mcp.server.oninitialized = () => pump.start()

  const transport = new StdioServerTransport()
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve())
    process.stdin.once('close', () => resolve())
    transport.onclose = () => resolve()
  })
  await mcp.connect(transport)
  log(`attached as ${node.name} (${node.id})${approver === undefined ? '' : `, permission relay to ${approver}`}`)
  const stop = async (): Promise<void> => {
    await pump.stop()
    await mcp.close().catch(() => {})
  }
  return { closed, stop }
}
