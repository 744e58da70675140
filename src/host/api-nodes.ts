// `amesh node ls` / `node rm` / `node add-a2a`: the local nodes as state a user can see and undo.
import type { Handlers } from '../control/server.js'
import type { A2aNodeInfo, LocalNodeRow } from '../control/wire.js'
import { streams } from '../delivery/a2a-endpoint.js'
import type { AgentsService } from '../agents/service.js'
import { defineError, NameCollisionError, UnknownNodeError } from '../util/errors.js'
import { checkNodeName, type LocalNode } from '../store/nodes.js'
import type { Components } from './components.js'

type Host = Pick<Components, 'nodes' | 'inbox' | 'consumption' | 'label' | 'registry' | 'a2a'>

export const NodeInUseError = defineError('NodeInUseError', 'NODE_IN_USE')
export const InboxNotEmptyError = defineError('InboxNotEmptyError', 'INBOX_NOT_EMPTY')

async function row (host: Host, n: LocalNode): Promise<LocalNodeRow> {
  const info = await host.inbox.info(n.record.id)
  const received = await host.inbox.lastReceived(n.record.id)
  return {
    name: n.record.name,
    id: n.record.id,
    kind: n.record.kind,
    parent: n.record.parent === undefined ? null : host.label(n.record.parent),
    created: n.record.created,
    last_received: received ?? null,
    unread: info.unacked,
    ...(n.record.a2a !== undefined ? { url: n.record.a2a.cardUrl } : {})
  }
}

/** `node add-a2a`: the name is checked, then the card fetched and checked; only then is anything stored. */
async function addA2a (host: Host, p: { name: string, url: string, parent?: string }): Promise<A2aNodeInfo> {
  checkNodeName(p.name)
  if (host.nodes.get(p.name) !== undefined) throw new NameCollisionError(`node ${p.name} already exists on this host`)
  if (p.parent !== undefined && host.nodes.get(p.parent) === undefined) throw new UnknownNodeError(`no node named ${p.parent} on this host to be the parent`)
  const endpoint = await host.a2a.clients.fetchCard(p.url)
  const node = await host.registry.addA2a(p.name, endpoint, p.parent)
  const card = endpoint.card as { name?: unknown, supportedInterfaces?: Array<{ protocolBinding?: unknown, url?: unknown }>, url?: unknown, preferredTransport?: unknown }
  const interfaces = (card.supportedInterfaces ?? [{ protocolBinding: card.preferredTransport ?? 'JSONRPC', url: card.url }]).map((i) => ({ binding: String(i.protocolBinding), url: String(i.url) }))
  return {
    id: node.record.id,
    name: node.record.name,
    ...(node.record.parent !== undefined ? { parent: host.label(node.record.parent) } : {}),
    depth: node.record.depth,
    kind: 'a2a',
    card_url: endpoint.cardUrl,
    agent: String(card.name),
    interfaces,
    streaming: streams(endpoint)
  }
}

function runningAgent (agents: AgentsService | undefined, nodeName: string): boolean {
  try {
    const state = agents?.manager.view(nodeName).state
    return state !== undefined && state !== 'stopped'
  } catch {
    return false
  }
}

/** Why this node may not be removed now, or undefined. */
async function removalRefusal (host: Host, agents: AgentsService | undefined, node: LocalNode, force: boolean): Promise<Error | undefined> {
  const n = node.record.name
  if (node.record.kind === 'managed' && runningAgent(agents, n)) return new NodeInUseError(`${n} is a managed node that is running: stop it first with \`amesh agent stop ${n}\``)
  const children = host.nodes.list().filter((c) => c.record.parent === node.record.id).map((c) => c.record.name)
  if (children.length > 0) return new NodeInUseError(`${n} is the parent of ${children.join(', ')}: remove those first`)
  const { unacked } = await host.inbox.info(node.record.id)
  if (unacked > 0 && !force) return new InboxNotEmptyError(`${n} has ${unacked} unread message(s): read them (\`amesh inbox ${n}\`) or remove it anyway with --force`)
  return undefined
}

export function nodeMethods (host: Host, agents?: AgentsService): Handlers<'node.list' | 'node.rm' | 'node.add_a2a'> {
  return {
    'node.add_a2a': { call: async (p) => await addA2a(host, p) },
    'node.list': { call: async () => await Promise.all(host.nodes.list().map(async (n) => await row(host, n))) },
    'node.rm': {
      call: async (p) => {
        const node = host.nodes.get(p.name)
        if (node === undefined) throw new UnknownNodeError(`no node named ${p.name} on this host`)
        const refusal = await removalRefusal(host, agents, node, p.force === true)
        if (refusal !== undefined) throw refusal
        const dropped = await host.inbox.dropNode(node.record.id)
        await host.consumption.dropNode(node.record.id)
        await host.nodes.remove(node.record.id)
        // an agent's open tasks go; what is still queued for it dies as A2A_AGENT_GONE, with notices
        if (node.record.kind === 'a2a') await host.a2a.transport.forget(node.record.id)
        return { removed: node.record.name, id: node.record.id, inbox_entries: dropped }
      }
    }
  }
}
