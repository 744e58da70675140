// The send pipeline: the sender node (created on first use), the target
// resolved to a kind, the packet built, the permission check (mandatory:
// it attaches the proof or throws the denial), and the transport registered
// for the target's kind makes it durable.
import { decodePacket, PacketCodec } from '../packet/codec.js'
import { copySendFields } from '../packet/fields.js'
import { SIGNALS, type Packet, type Payload, type Signal } from '../packet/types.js'
import type { SendParams } from '../control/send-params.js'
import type { QueueResult, Transport } from '../delivery/transport.js'
import type { InboxStore } from '../store/inbox.js'
import type { LocalNode } from '../store/nodes.js'
import { InvalidArgumentError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { NodeRegistry } from './nodes.js'
import type { Resolver, Target, TargetKind } from './resolve.js'

/** The `send` parameters (src/control/send-params.ts; its packet fields come from src/packet/fields.ts). */
export type SendRequest = SendParams

/**
 * The transport registered for each target kind. The type asks for one entry
 * per kind: adding a kind to `Target` without its transport does not compile.
 * Today: `local` → the node's inbox, `remote` → the libp2p peer link,
 * `a2a` → an external A2A agent over HTTP (queued in the outbox).
 */
export type Transports = { readonly [K in TargetKind]: Transport<Extract<Target, { kind: K }>> }

/** The fields that mark a member's copy of a broadcast. */
export interface BroadcastMarks { broadcast: string, group: string }

/** The sender-side permission check: attaches proof to the packet, or throws the denial. */
export interface SendAuthorizer {
  authorizeSend: (packet: Packet, from: LocalNode, target: Target) => Promise<void>
  /** authorizeSend without waiting when it can decide at once (true: decided); false: call authorizeSend */
  authorizeSendNow: (packet: Packet, from: LocalNode, target: Target) => boolean
}

export interface SenderComponents {
  registry: Pick<NodeRegistry, 'ensure' | 'known'>
  resolver: Pick<Resolver, 'resolve' | 'known'>
  authorizer: SendAuthorizer
  transports: Transports
  inbox: Pick<InboxStore, 'entryById'>
  /** default time-to-live of a queued packet, ms */
  ttl: number
}

function signalOf (s: string | undefined): Signal {
  const v = (s ?? 'MESSAGE').toUpperCase()
  if (!(SIGNALS as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`unknown signal: ${s ?? ''} (known: ${SIGNALS.join(', ')})`)
  }
  return v as Signal
}

/** The conversation of the message replied to, when it is in the sender's inbox. */
async function conversationOf (c: Pick<SenderComponents, 'inbox'>, nodeId: string, msgId: string): Promise<string | undefined> {
  const entry = await c.inbox.entryById(nodeId, msgId)
  if (entry === undefined) return undefined
  const original = decodePacket(entry.packet)
  return original.conversation_id ?? original.id
}

function buildPacket (req: SendRequest, fromId: string, fromName: string, toId: string, toName: string): Packet {
  const payload: Payload = { ...(req.payload ?? {}) }
  if (req.text !== undefined) payload.text = req.text
  const packet: Packet = {
    id: ulid(),
    from: fromId,
    to: toId,
    from_name: fromName,
    to_name: toName,
    signal: signalOf(req.signal),
    scope: { files: req.files ?? [], zone: req.zone ?? 'project' },
    payload,
    ts: Date.now()
  }
  copySendFields(req, packet)
  return packet
}

/** A reply without its own conversation joins the one of the message it answers (no copy of the request for it). */
async function joinConversation (c: SenderComponents, req: SendRequest, packet: Packet): Promise<void> {
  const conversation = await conversationOf(c, packet.from, req.in_reply_to as string)
  if (conversation !== undefined) packet.conversation_id = conversation
}

/** A send built and authorized, not yet handed to its transport. */
export interface PreparedSend {
  packet: Packet
  bytes: Uint8Array
  /** bytes with the free room before them that the target's transport asked for (Transport.room), when it did */
  whole?: Uint8Array
  target: Target
  ttl: number
}

/** `send`: validate, resolve, check the ACL, write durably (outbox or local inbox), return the id. */
export class Sender {
  /** this sender's packet codec (its encode scratch is per instance) */
  private readonly codec = new PacketCodec()

  constructor (private readonly components: SenderComponents) {}

  /**
   * `marks`: fields only the daemon sets (a broadcast copy's broadcast id and
   * group). Not async: no suspended frame holds the request (its text) while
   * the packet waits for durability, so it is young garbage by then.
   */
  send (req: SendRequest, marks?: BroadcastMarks): Promise<QueueResult> {
    return this.prepare(req, marks).then(this.deliverPrepared)
  }

  private transportOf (target: Target): Transport<Target> {
    return this.components.transports[target.kind] as Transport<Target>
  }

  private readonly deliverPrepared = (s: PreparedSend): Promise<QueueResult> => this.deliver(s)

  /**
   * The send up to the transport: sender node, target, packet built,
   * authorized, encoded (nothing stored yet). Each step waits only when it
   * must (a node to create, a target to look up, a conversation to read, a
   * signal-destination rule): a send from a known node to a known target
   * runs through without a suspended frame or a promise per step.
   */
  async prepare (req: SendRequest, marks?: BroadcastMarks): Promise<PreparedSend> {
    const c = this.components
    const from = c.registry.known(req.as) ?? await c.registry.ensure(req.as)
    const target = c.resolver.known(req.to) ?? await c.resolver.resolve(req.to)
    const packet = buildPacket(req, from.record.id, from.record.name, target.id, target.name)
    if (req.conversation_id === undefined && req.in_reply_to !== undefined) await joinConversation(c, req, packet)
    if (marks !== undefined) { packet.broadcast = marks.broadcast; packet.group_id = marks.group }
    if (!c.authorizer.authorizeSendNow(packet, from, target)) await c.authorizer.authorizeSend(packet, from, target)
    // a transport that stores the packet behind a header (the outbox) gets it encoded after room for that header
    const room = this.transportOf(target).room?.(packet)
    const { bytes, whole } = room === undefined ? { bytes: this.codec.encode(packet), whole: undefined } : this.codec.encodeAfter(room, packet)
    return { packet, bytes, whole, target, ttl: req.ttl_ms ?? c.ttl }
  }

  /**
   * Make a prepared send durable. The transport takes the packet before this
   * returns its promise (the outbox stages it, the inbox takes its place in
   * line), so packets delivered one after another keep that order.
   */
  deliver (s: PreparedSend): Promise<QueueResult> {
    const transport = this.transportOf(s.target)
    try {
      return transport.deliver(s.packet, s.bytes, s.target, s.ttl, s.whole)
    } catch (err) {
      return Promise.reject(err)
    }
  }
}
