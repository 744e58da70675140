// `amesh node ls` / `node rm`: the local nodes as state a user can see and undo.
import type { Handlers } from '../control/server.js'
import type { LocalNodeRow } from '../control/wire.js'
import type { AgentsService } from '../agents/service.js'
import { defineError, UnknownNodeError } from '../util/errors.js'
import type { LocalNode } from '../store/nodes.js'
import type { Components } from './components.js'

type Host = Pick<Components, 'nodes' | 'inbox' | 'consumption' | 'label'>

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
    unread: info.unacked
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

export function nodeMethods (host: Host, agents?: AgentsService): Handlers<'node.list' | 'node.rm'> {
  return {
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
        return { removed: node.record.name, id: node.record.id, inbox_entries: dropped }
      }
    }
  }
}
