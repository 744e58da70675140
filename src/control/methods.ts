// The control contract: every method the daemon answers on its socket, with
// its parameter schema and its result type. The client's `call` takes its
// types from here; the daemon's table (src/host/api*.ts) is built from the
// same entries (src/control/server.ts `implement`), so a method, its params
// and its result are declared once for both sides.
import { z, type ZodType } from 'zod'
import { SIGNALS, ZONES } from '../packet/types.js'
import { PERMISSION_VERDICT_METHOD, permissionVerdictSchema } from './permission.js'
import { checkSendParams, sendSchema } from './send-params.js'
import { A2A_METHODS, type A2aMethodResults } from './a2a-methods.js'
import { DAY } from '../util/time.js'
import {
  READ_BY, RECEIPT_STATES,
  type A2aNodeInfo, type AgentRow, type AttachEvent, type BroadcastResult, type GrantView, type InboxState, type JsonObject, type LocalNodeRow, type MarkReadResult, type NodeInfo,
  type NodeRow, type PeersResult, type ReachableRow, type ReceiptStateName, type ReceiptView, type RemoteInfo, type RenderedPacket,
  type ResolvedNode, type SendResult, type StatusResult, type TunnelStatus, type VerdictResult
} from './wire.js'
import type { ErrorBody } from './protocol.js'

const name = z.string().min(1).max(256)
const seq = z.number().int().min(0)
const none = z.object({}).strict()
const word = z.string().min(1).max(4096)
const msgId = z.string().min(1).max(256)
/** the longest a `receipt.wait` call blocks, ms */
const MAX_RECEIPT_WAIT = DAY

/** how a stream's events travel: one JSON line each, or binary frames (src/control/follow-frames.ts) */
export const FRAMINGS = ['ndjson', 'binary'] as const

export { MAX_BATCH_CHARS, MAX_BATCH_SENDS } from './batch-limits.js'

const sshJoinSchema = z.object({
  destination: z.string().min(1).max(512).regex(/^[^-\s][^\s]*$/, 'an ssh destination may not start with "-" or hold spaces'),
  port: z.number().int().min(1).max(65535).optional(),
  identity: word.optional(),
  config: word.optional(),
  options: z.array(word.regex(/^[^-]/, 'an ssh -o option may not start with "-"')).max(64).optional(),
  remoteAmesh: word.optional(),
  remoteHome: word.optional()
}).strict()

/** A method's parameters: the schema (the reference, and the wording of errors) and an optional fast check. */
export interface MethodSpec<P = unknown> {
  params: ZodType<P, z.ZodTypeDef, unknown>
  /** the parsed params when certainly valid (what `params.parse` gives), else undefined */
  fast?: (raw: unknown) => P | undefined
}

/** Every control method and its parameters. */
export const METHODS = {
  status: { params: none },
  id: { params: none },
  nodes: { params: none },
  'node.add': { params: z.object({ name, parent: name.optional() }).strict() },
  'node.ensure': { params: z.object({ name }).strict() },
  /** register an external A2A agent as a node: its card (card URL or base URL) is fetched and checked first */
  'node.add_a2a': { params: z.object({ name, url: z.string().min(1).max(2048), parent: name.optional() }).strict() },
  /** a name or id resolved to {id, name, local} (cards, card exchange, DHT) */
  'node.resolve': { params: z.object({ target: name }).strict() },
  /** the cards known here, each with whether `as` may message it */
  'nodes.reachable': { params: z.object({ as: name }).strict() },
  send: { params: sendSchema, fast: checkSendParams },
  /**
   * many sends in one call, each exactly a `send` (checked, authorized, durable), made
   * durable in their order; one result per entry, in order: the send's result or
   * {error} (nothing stored for that entry). Over MAX_BATCH_SENDS entries or
   * MAX_BATCH_CHARS the whole call is refused (BATCH_TOO_LARGE) and nothing is sent.
   */
  'send.batch': { params: z.object({ sends: z.array(z.unknown()).min(1) }).strict() },
  /** the sender's receipt history of a message this host sent */
  'receipt.get': { params: z.object({ id: msgId }).strict() },
  /** block until a sent message reached a state (or ended: refused, dead), or the timeout */
  'receipt.wait': { params: z.object({ id: msgId, state: z.enum(RECEIPT_STATES), timeout_ms: z.number().int().min(0).max(MAX_RECEIPT_WAIT) }).strict() },
  /** framing "binary": the reply is one binary frame of the entries' stored bytes (a follow page, follow-frames.ts), for ControlClient.callFrame; default a JSON array */
  'inbox.read': { params: z.object({ node: name, after: seq.optional(), limit: z.number().int().min(1).max(10_000).optional(), framing: z.enum(FRAMINGS).optional() }).strict() },
  /** framing "binary": pages as binary frames of stored bytes (follow-frames.ts), for ControlClient.frames; default NDJSON events */
  'inbox.follow': { params: z.object({ node: name, after: seq.optional(), framing: z.enum(FRAMINGS).optional() }).strict() },
  /** the node's most recent packets (acked or not), oldest first */
  'inbox.recent': { params: z.object({ node: name, limit: z.number().int().min(1).max(1000).optional() }).strict() },
  /** one packet of the node's retained inbox, by message id */
  'inbox.get': { params: z.object({ node: name, id: z.string().min(1).max(256) }).strict() },
  ack: { params: z.object({ node: name, seq }).strict() },
  /** a session attaches (stream): the first event says where the node stands; attached until the stream ends */
  'inbox.attach': { params: z.object({ node: name }).strict() },
  /** channel notifications for these seqs were written to the attachment (pushed, not read) */
  'inbox.pushed': { params: z.object({ node: name, attachment: z.string().min(1).max(64), seqs: z.array(seq).max(100_000) }).strict() },
  /** the session handled these messages: everything up to `upto`, and/or single ones by id or seq */
  'inbox.mark_read': { params: z.object({ node: name, upto: seq.optional(), ids: z.array(msgId).max(10_000).optional(), seqs: z.array(seq).max(10_000).optional(), by: z.enum(READ_BY) }).strict() },
  /** unread messages, oldest first; with `take`, they are marked read (the `inbox` tool) */
  'inbox.unread': { params: z.object({ node: name, limit: z.number().int().min(1).max(1000).optional(), take: z.boolean().optional() }).strict() },
  /** where a node stands: cursor, unread, attached sessions, last read and attach */
  'inbox.state': { params: z.object({ node: name }).strict() },
  card: { params: z.object({ target: name }).strict() },
  /** dial a peer address now and remember it; it must end in /p2p/<id> unless any_peer */
  join: { params: z.object({ addr: z.string().min(1).max(4096), any_peer: z.boolean().optional() }).strict() },
  /** forget a remembered peer address (no more dials at start) */
  'join.forget': { params: z.object({ addr: z.string().min(1).max(4096) }).strict() },
  /** connected peers (direct or relayed), remembered and configured peer addresses */
  peers: { params: none },
  /** this host's nodes: kind, parent, created, last received, unread */
  'node.list': { params: none },
  /** remove a node: key, inbox, cursor (refused for a running managed node, a parent, unread without force) */
  'node.rm': { params: z.object({ name, force: z.boolean().optional() }).strict() },
  'outbox.dead': { params: z.object({ limit: z.number().int().min(1).max(100_000).optional() }).strict() },
  shutdown: { params: none },
  grant: {
    params: z.object({
      as: name,
      to: name,
      sub: name.optional(),
      signals: z.array(z.enum(SIGNALS)).optional(),
      zones: z.array(z.enum(ZONES)).optional(),
      expires_ms: z.number().int().positive().optional(),
      delegate: z.string().min(1).optional()
    }).strict()
  },
  revoke: { params: z.object({ as: name, token_id: z.string().min(1) }).strict() },
  grants: { params: none },
  block: { params: z.object({ as: name, sender: name, on: z.boolean() }).strict() },
  'profile.set': { params: z.object({ as: name, profile: z.record(z.unknown()) }).strict() },
  [PERMISSION_VERDICT_METHOD]: { params: permissionVerdictSchema },
  'discovery.info': { params: none },
  'discovery.lookup': { params: z.object({ target: z.string().min(1).max(256) }).strict() },
  'discovery.publish': { params: none },
  'join.ssh': { params: sshJoinSchema },
  'join.tunnels': { params: none },
  'join.leave': { params: z.object({ target: z.string().min(1).max(1024) }).strict() },
  'agent.start': { params: z.object({ path: z.string().min(1).max(4096), name: name.optional(), parent: name.optional() }).strict() },
  'agent.stop': { params: z.object({ name }).strict() },
  'agent.ls': { params: none },
  'agent.heartbeat': { params: z.object({ name }).strict() },
  'agent.host-grant': { params: z.object({ to: name, cmd: z.string().min(1).max(256), expires_ms: z.number().int().positive().optional() }).strict() },
  ...A2A_METHODS
} as const satisfies Record<string, MethodSpec>

export type MethodName = keyof typeof METHODS

/** What each method returns (a stream method: void; its events are in StreamEvents). */
export interface MethodResults extends A2aMethodResults {
  status: StatusResult
  id: { peerId: string, addrs: string[] }
  nodes: NodeRow[]
  'node.add': NodeInfo & { depth: number }
  'node.ensure': NodeInfo
  'node.add_a2a': A2aNodeInfo
  'node.resolve': ResolvedNode
  'nodes.reachable': ReachableRow[]
  /** with to "broadcast": id is the broadcast id and the broadcast fields are set */
  send: SendResult & { receipt: ReceiptStateName | 'off' } & Partial<BroadcastResult>
  'send.batch': { results: Array<(SendResult & { receipt: ReceiptStateName | 'off' }) | { error: ErrorBody }> }
  'receipt.get': ReceiptView
  'receipt.wait': ReceiptView & { reached: boolean }
  'inbox.read': RenderedPacket[]
  'inbox.follow': void
  'inbox.recent': RenderedPacket[]
  'inbox.get': RenderedPacket
  ack: { cursor: number }
  'inbox.attach': void
  'inbox.pushed': { pushed: number }
  'inbox.mark_read': MarkReadResult
  'inbox.unread': RenderedPacket[]
  'inbox.state': InboxState
  card: object
  join: { peerId: string }
  'join.forget': { forgotten: boolean }
  peers: PeersResult
  'node.list': LocalNodeRow[]
  'node.rm': { removed: string, id: string, inbox_entries: number }
  'outbox.dead': JsonObject[]
  shutdown: { stopping: true }
  grant: GrantView & { handed: boolean, expires_clamped?: string }
  revoke: { token: string, revoker: string }
  grants: { held: GrantView[], issued: GrantView[] }
  block: { node: string, sender: string, blocked: boolean }
  'profile.set': object
  [PERMISSION_VERDICT_METHOD]: VerdictResult
  'discovery.info': RemoteInfo
  'discovery.lookup': object[]
  'discovery.publish': { published: number }
  'join.ssh': TunnelStatus
  'join.tunnels': TunnelStatus[]
  'join.leave': { removed: boolean }
  'agent.start': AgentRow
  'agent.stop': AgentRow
  'agent.ls': AgentRow[]
  'agent.heartbeat': { name: string, state: string }
  'agent.host-grant': JsonObject & { token_id: string, handed: boolean }
}

/** The events of each stream method. */
export interface StreamEvents {
  'inbox.follow': RenderedPacket
  'inbox.attach': AttachEvent
}

export type StreamName = keyof StreamEvents
export type CallName = Exclude<MethodName, StreamName>
/** The params a client passes (before defaults and parsing). */
export type ParamsOf<K extends MethodName> = z.input<(typeof METHODS)[K]['params']>
/** The params a handler receives (parsed). */
export type ParsedParams<K extends MethodName> = z.output<(typeof METHODS)[K]['params']>
export type ResultOf<K extends MethodName> = MethodResults[K]
export type EventOf<K extends StreamName> = StreamEvents[K]

/** Whether a method of this name exists (own entries only: `constructor`, `__proto__`, … are not methods). */
export function isMethodName (name: string): name is MethodName {
  return Object.hasOwn(METHODS, name)
}

// every method has a result type and every result type a method
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const contractComplete: Exact<keyof MethodResults, MethodName> = true
void contractComplete
