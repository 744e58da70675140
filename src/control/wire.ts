// The wire types of the control socket: what the daemon's methods return and
// stream, as the JSON a face receives. The daemon's implementations are
// checked against them (src/control/methods.ts); nothing here imports it.
export type { RenderedPacket } from '../packet/render.js'

/** Any JSON object (a result whose fields a face only prints). */
export type JsonObject = Record<string, unknown>

/** A managed node as `agent.start|stop|ls` show it. */
export interface AgentRow { name: string, id: string, host: string, parent: string | null, state: string, pid?: number | null, restarts?: number, uptime_ms?: number, last_exit?: unknown, acp?: unknown }

/** One node, local or known from a card (`nodes`). */
export interface NodeRow {
  name: string
  id: string
  kind: string
  host: string
  local: boolean
  parent?: string
  /** a local node's presence: sessions attached now, when one last read and attached (ISO times) */
  session?: NodeSession
}

export interface NodeSession { attached: number, last_read?: string, last_attach?: string }

/** A node row with whether the asking node may message it (`nodes.reachable`). */
export type ReachableRow = NodeRow & { may_message: boolean, reason?: string }

/** A local node's inbox counters. */
export interface InboxInfo { last: number, cursor: number, unacked: number }

/** a node's inbox figures, or why they could not be read (a store being reopened after a fault) */
export type InboxInfoOrError = InboxInfo | { error: string }

export interface NodeStatus {
  name: string
  id: string
  kind: string
  parent?: string
  inbox: InboxInfoOrError
}

/** The `status` result. */
export interface StatusResult {
  pid: number
  peerId: string
  addrs: string[]
  home: string
  nodes: NodeStatus[]
  peers: string[]
  outbox: { queued: number, dead: number, by_destination: Record<string, number> }
  memory: Record<string, number>
  /** the store's health: ok, full (under the watermark or ENOSPC), faulted; free bytes, faults, reopens */
  store: { state: string, free_bytes?: number, min_free_bytes: number, error?: { code: string, message: string }, faults: number, reopens: number }
  /** circuit relay: reachability, relays in use, reservations (docs/DISCOVERY.md "Behind a NAT") */
  relay?: RelayStatus
  [key: string]: unknown
}

/** What `amesh status` shows about relays. */
export interface RelayStatus {
  /** public (an announced direct address outside private ranges), private (a peer saw this host behind a NAT), unknown */
  reachability: 'public' | 'private' | 'unknown'
  /** why `private`: the address a peer saw this host connect from, which peer, when (ms) */
  nat?: { observed: string, by: string, at: number }
  /** relays this host holds a reservation on, with the relayed addresses it announces */
  relays: Array<{ peer: string, addrs: string[] }>
  /** relays that refused or failed a reservation, with the reason */
  refused: Array<{ relay: string, reason: string, at: string }>
  /** each connected peer: direct or relayed (and through which relay) */
  connections: Array<{ peer: string, via: 'direct' | 'relayed', relay?: string }>
  /** DCUtR (hole punching) runs on every relayed connection; from Node it rarely succeeds, and the connection then stays relayed */
  hole_punching: string
  /** when this host serves as a relay: the hosts holding a reservation on it */
  serving?: { accept: string, max_reservations: number, limits: { duration_ms: number, data_bytes: number }, reservations: Array<{ peer: string, expires: string }> }
}

/** The result of a `send` (and of a permission verdict's send). */
export interface SendResult { id: string, state: 'queued' | 'delivered', seq?: number }

/** One member's copy of a broadcast: delivered (local inbox), queued (outbox, for its host), or refused by the sender's check. */
export interface BroadcastMember {
  to: string
  to_id: string
  state: 'delivered' | 'queued' | 'refused'
  /** "delivered", "queued" or "refused: CODE" */
  result: string
  /** the member's own message id (receipts, replies); absent when refused */
  id?: string
  seq?: number
  code?: string
  reason?: string
}

/** `send` to "broadcast": the broadcast id, the group's head, and one result per member. */
export interface BroadcastResult { broadcast: string, group: string, group_id: string, members: BroadcastMember[] }

/** What became of a sent message, in order (docs/DELIVERY.md "Receipts"). */
export const RECEIPT_STATES = ['queued', 'delivered', 'pushed', 'read', 'refused', 'dead'] as const
export type ReceiptStateName = typeof RECEIPT_STATES[number]
/** What marked a message read: a tool of the session, `amesh ack`/`inbox --ack` (host), a relay verdict. */
export const READ_BY = ['reply', 'ack', 'inbox', 'host', 'relay'] as const

/** The first event of `inbox.attach`: where the node stands as a session attaches. */
export interface AttachEvent { attachment: string, cursor: number, last: number, unread: number, read_above: number[] }

/** `inbox.mark_read`: the cursor after it, how many became read, how many are still unread. */
export interface MarkReadResult { cursor: number, newly_read: number, unread: number }

/** `inbox.state`: where a node stands (times in ms). */
export interface InboxState { last: number, cursor: number, unread: number, attached: number, last_read?: number, last_attach?: number }

/** A sent message's receipt history (`receipt.get`; `receipt.wait` adds whether the state was reached). */
export interface ReceiptView {
  id: string
  to: string
  to_name: string
  state: ReceiptStateName
  /** false when sent with no_receipt */
  receipts: boolean
  events: Array<{ state: ReceiptStateName, at: number, time: string, reason?: string }>
}

/** A node just created or looked up (`node.add`, `node.ensure`). */
export interface NodeInfo { id: string, name: string, parent?: string, depth?: number }

/** `node.add_a2a`: the a2a node, and what its card says. */
export interface A2aNodeInfo extends NodeInfo {
  kind: 'a2a'
  card_url: string
  /** the agent's own name (its card's) */
  agent: string
  /** the interfaces the card offers (protocol binding and URL) */
  interfaces: Array<{ binding: string, url: string }>
  streaming: boolean
}

/** A name or id resolved to a node (`node.resolve`). */
export interface ResolvedNode { id: string, name: string, local: boolean }

/** The answer to a relayed permission request (`permission.verdict`). */
export type VerdictResult = SendResult & { as: string, to: string, to_id: string, request_id: string, behavior: 'allow' | 'deny' }

/** This host as seen from itself (`discovery.info`; read over ssh by a joining host). */
export interface RemoteInfo {
  peerId: string
  addrs: string[]
  /** where the amesh accepts connections, as seen from its own host */
  tunnelTarget: { host: string, port: number }
}

/** One supervised ssh tunnel (`join.ssh`, `join.tunnels`). */
export interface TunnelStatus {
  target: string
  state: string
  peerId?: string
  localPort?: number
  pid?: number
  restarts: number
  lastError?: string
}

/** A grant as listed (`grant`, `grants`). */
export interface GrantView {
  token_id: string
  issuer: string
  issuer_id: string
  audience: string
  audience_id: string
  subject: string
  subject_id: string
  signals: readonly string[] | 'any'
  zones: readonly string[] | 'any'
  expires: string
  chain_length: number
  revoked: boolean
}

/** `node.list`: one of this host's nodes. */
export interface LocalNodeRow {
  name: string
  id: string
  kind: string
  parent: string | null
  created: number
  last_received: number | null
  unread: number
  /** an a2a node: the URL its agent card came from */
  url?: string
}

/** `peers`: one connected peer host (its connections' remote addresses). */
/** A connected peer (`encryption`: the connection's encrypter, `/noise` end to end between the two hosts, relayed or not). */
export interface PeerRow { peer: string, addrs: string[], direction: string, relayed: boolean, opened: number, encryption?: string }

export interface PeersResult { connected: PeerRow[], remembered: string[], configured: string[] }
