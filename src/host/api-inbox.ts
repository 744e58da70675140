import type { Handlers } from '../control/server.js'
import type { ReachableRow } from '../control/wire.js'
import type { Packet } from '../packet/types.js'
import { InvalidArgumentError, UnknownNodeError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { Components } from './components.js'

type Host = Pick<Components, 'nodes' | 'inbox' | 'consumption' | 'label' | 'resolver' | 'acl' | 'directory' | 'libp2p' | 'receipts'>
import { renderEntry, type RenderedPacket } from '../packet/render.js'
import { nodeList } from './status.js'

// Control methods a face uses to look at nodes and an inbox: resolve a name,
// the nodes one may message, recent packets, one packet by id.

function localNode (host: Pick<Components, 'nodes'>, n: string): { id: string, name: string } {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return { id: node.record.id, name: node.record.name }
}

/**
 * Whether `from` may send a MESSAGE to `to` right now: the sender-side ACL
 * decision on a probe packet (no notice, nothing sent).
 */
async function mayMessage (host: Host, from: string, to: string): Promise<{ may_message: boolean, reason?: string }> {
  const sender = host.nodes.get(from)
  if (sender === undefined) return { may_message: false, reason: `no node named ${from} on this host` }
  try {
    const target = await host.resolver.resolve(to)
    const probe: Packet = { id: ulid(), from: sender.record.id, to: target.id, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: '' }, ts: Date.now() }
    const decision = host.acl.probeSend(probe, sender, target)
    return decision.allow ? { may_message: true } : { may_message: false, reason: `${decision.code}: ${decision.reason}` }
  } catch (err) {
    return { may_message: false, reason: err instanceof Error ? err.message : String(err) }
  }
}

/** Control methods to look at nodes and an inbox. */
export function inboxMethods (host: Host): Handlers<'node.resolve' | 'nodes.reachable' | 'inbox.recent' | 'inbox.get'> {
  return {
    /** Resolve a name or id to {id, name, local} (cards, card exchange, DHT). */
    'node.resolve': {
      call: async (p) => {
        const t = await host.resolver.resolve(p.target)
        return { id: t.id, name: t.name, local: t.kind !== 'remote' }
      }
    },
    /** The node's most recent packets (acked or not), oldest first. */
    'inbox.recent': {
      call: async (p): Promise<RenderedPacket[]> => {
        const id = localNode(host, p.node).id
        const info = await host.inbox.info(id)
        const limit = p.limit ?? 20
        const entries = await host.inbox.read(id, Math.max(0, info.last - limit), limit)
        return entries.map((e) => renderEntry(e, (x) => host.label(x)))
      }
    },
    /** One packet of the node's retained inbox, by message id. */
    'inbox.get': {
      call: async (p): Promise<RenderedPacket> => {
        const nodeId = localNode(host, p.node).id
        const entry = await host.inbox.entryById(nodeId, p.id)
        if (entry === undefined) throw new InvalidArgumentError(`no message ${p.id} in the inbox of ${p.node}`)
        return renderEntry(entry, (x) => host.label(x))
      }
    },
    /** The cards known here, each with whether `as` may message it (and, as their hosts answer, whether a session is attached). */
    'nodes.reachable': {
      call: async (p) => {
        const out: ReachableRow[] = []
        for (const n of await host.receipts.presence.fill(nodeList(host))) {
          if (n.name === p.as && n.local === true) continue
          out.push({ ...n, ...await mayMessage(host, p.as, String(n.id)) })
        }
        return out
      }
    }
  }
}
