import { copySendFields } from '../packet/fields.js'
import { SIGNALS, type Packet, type Payload, type Signal } from '../packet/types.js'
import type { SendParams } from '../control/send-params.js'
import { InvalidArgumentError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { QueueResult } from '../delivery/service.js'
import type { Host } from './host.js'
import { resolveTarget } from './resolve.js'
import { ensureNode } from './nodes.js'
import { decodePacket } from '../packet/codec.js'

/** The `send` parameters (src/control/send-params.ts; its packet fields come from src/packet/fields.ts). */
export type SendRequest = SendParams

function signalOf (s: string | undefined): Signal {
  const v = (s ?? 'MESSAGE').toUpperCase()
  if (!(SIGNALS as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`unknown signal: ${s ?? ''} (known: ${SIGNALS.join(', ')})`)
  }
  return v as Signal
}

/** The conversation of the message replied to, when it is in the sender's inbox. */
async function conversationOf (host: Host, nodeId: string, msgId: string): Promise<string | undefined> {
  const bytes = await host.db.get('d!' + msgId)
  if (bytes === undefined) return undefined
  const { nodeId: owner, seq } = JSON.parse(new TextDecoder().decode(bytes)) as { nodeId: string, seq: number }
  if (owner !== nodeId) return undefined
  const [entry] = await host.inbox.read(owner, seq - 1, 1)
  if (entry === undefined || entry.seq !== seq) return undefined
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
  copySendFields({ ...req, conversation_id: conversation }, packet)
  return packet
}

/** `send`: validate, resolve, write durably (outbox or local inbox), return the id. */
export async function sendMessage (host: Host, req: SendRequest): Promise<QueueResult> {
  const from = await ensureNode(host, req.as)
  const target = await resolveTarget(host, req.to)
  const packet = await buildPacket(host, req, from.record.id, from.record.name, target.id, target.name)
  await host.authorizeSend?.(packet, from, target)
  const bytes = host.delivery.codec.encode(packet)
  if (target.kind === 'local') return await host.delivery.deliverLocal(packet, bytes)
  return await host.delivery.enqueue(packet, bytes, target.host, req.ttl_ms ?? host.config.ttl)
}
