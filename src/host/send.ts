import { encodePacket } from '../packet/codec.js'
import { SIGNALS, type Packet, type Payload, type Priority, type Signal, type Zone } from '../packet/types.js'
import { InvalidArgumentError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { QueueResult } from '../delivery/service.js'
import type { Host } from './host.js'
import { resolveTarget } from './resolve.js'
import { ensureNode } from './nodes.js'
import { decodePacket } from '../packet/codec.js'

export interface SendRequest {
  as: string
  to: string
  text?: string
  signal?: string
  payload?: Payload
  conversation_id?: string
  in_reply_to?: string
  session_id?: string
  return_to?: string
  priority?: Priority
  requires_reply?: boolean
  zone?: Zone
  files?: string[]
  ttl_ms?: number
}

function signalOf (s: string | undefined): Signal {
  const v = (s ?? 'MESSAGE').toUpperCase()
  if (!(SIGNALS as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`unknown signal: ${s ?? ''} (known: ${SIGNALS.join(', ')})`)
  }
  return v as Signal
}

/** The conversation of the message replied to, when it is in the sender's inbox. */
async function conversationOf (host: Host, nodeId: string, msgId: string): Promise<string | undefined> {
  const entry = await host.inbox.entryById(nodeId, msgId)
  if (entry === undefined) return undefined
  const original = decodePacket(entry.packet)
  return original.conversation_id ?? original.id
}

async function buildPacket (host: Host, req: SendRequest, fromId: string, fromName: string, toId: string, toName: string): Promise<Packet> {
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
  const conversation = req.conversation_id ?? (req.in_reply_to !== undefined ? await conversationOf(host, fromId, req.in_reply_to) : undefined)
  const optional = { conversation_id: conversation, in_reply_to: req.in_reply_to, session_id: req.session_id, return_to: req.return_to, priority: req.priority, requires_reply: req.requires_reply }
  for (const [k, v] of Object.entries(optional)) {
    if (v !== undefined) (packet as unknown as Record<string, unknown>)[k] = v
  }
  return packet
}

/** `send`: validate, resolve, write durably (outbox or local inbox), return the id. */
export async function sendMessage (host: Host, req: SendRequest): Promise<QueueResult> {
  const from = await ensureNode(host, req.as)
  const target = await resolveTarget(host, req.to)
  const packet = await buildPacket(host, req, from.record.id, from.record.name, target.id, target.name)
  await host.authorizeSend?.(packet, from, target)
  const bytes = encodePacket(packet)
  if (target.kind === 'local') return await host.delivery.deliverLocal(packet, bytes)
  return await host.delivery.enqueue(packet, bytes, target.host, req.ttl_ms ?? host.config.ttl)
}
