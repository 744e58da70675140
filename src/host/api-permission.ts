import { isPermissionRequest, permissionVerdictSend, PERMISSION_VERDICT_METHOD, type PermissionVerdictParams } from '../control/permission.js'
import type { Handlers } from '../control/server.js'
import type { VerdictResult } from '../control/wire.js'
import { decodePacket } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import { InvalidArgumentError, UnknownNodeError } from '../util/errors.js'
import type { Components } from './components.js'

type Host = Pick<Components, 'nodes' | 'inbox' | 'sender' | 'label'>

// The daemon side of the permission relay (src/control/permission.ts):
// `amesh approve|deny` and the approve/deny tools answer a relayed request.

const SCAN_BATCH = 1000

interface NodeRef { id: string, name: string }

function localNode (host: Host, n: string): NodeRef {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return { id: node.record.id, name: node.record.name }
}

/** The newest permission ESCALATE for a request id in one node's retained inbox. */
async function findEscalate (host: Host, nodeId: string, rid: string): Promise<Packet | undefined> {
  let found: Packet | undefined
  let after = 0
  for (;;) {
    const entries = await host.inbox.read(nodeId, after, SCAN_BATCH)
    for (const e of entries) {
      const p = decodePacket(e.packet)
      if (isPermissionRequest(p, rid)) found = p
      after = e.seq
    }
    if (entries.length < SCAN_BATCH) return found
  }
}

async function verdict (host: Host, p: PermissionVerdictParams): Promise<VerdictResult> {
  const candidates = p.as !== undefined ? [localNode(host, p.as)] : host.nodes.list().map((n) => ({ id: n.record.id, name: n.record.name }))
  const matches: Array<{ node: NodeRef, escalate: Packet }> = []
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
  const r = await host.sender.send(permissionVerdictSend(node.name, escalate, p.request_id, p.behavior))
  return { ...r, as: node.name, to: host.label(escalate.from), to_id: escalate.from, request_id: p.request_id, behavior: p.behavior }
}

/** Control methods of the permission relay. */
export function permissionMethods (host: Host): Handlers<typeof PERMISSION_VERDICT_METHOD> {
  return {
    /** Answer a relayed permission request: a verdict MESSAGE to the ESCALATE's sender. */
    [PERMISSION_VERDICT_METHOD]: { call: async (p) => await verdict(host, p) }
  }
}
