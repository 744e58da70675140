import { implement, type MethodTable } from '../control/server.js'
import { UnknownNodeError } from '../util/errors.js'
import type { Components } from './components.js'
import { follow, readMethod } from './api-follow.js'
import { hostStatus, nodeList } from './status.js'
import { aclMethods } from './api-acl.js'
import { agentsMethods } from './api-agents.js'
import { discoveryMethods } from './api-discovery.js'
import { inboxMethods } from './api-inbox.js'
import { permissionMethods } from './api-permission.js'
import { consumptionMethods, readUpTo } from './api-consumption.js'
import { receiptMethods } from './api-receipts.js'
import { sendBatchMethods } from './api-send.js'
import { nodeMethods } from './api-nodes.js'
import { peerMethods } from './api-peers.js'
import { a2aMethods, a2aOff, type A2aFaceState } from './api-a2a.js'

function localNode (host: Pick<Components, 'nodes'>, n: string): string {
  const node = host.nodes.get(n)
  if (node === undefined) throw new UnknownNodeError(`no node named ${n} on this host`)
  return node.record.id
}

/** The daemon's control methods, each over the components it reads. */
export function controlMethods (host: Components, shutdown: () => void, a2a: A2aFaceState = a2aOff()): MethodTable {
  return implement({
    ...a2aMethods(host, a2a),
    status: { call: async () => ({ ...(await hostStatus(host)), a2a: a2a.info }) },
    id: {
      call: async () => ({ peerId: host.libp2p.peerId.toString(), addrs: host.libp2p.getMultiaddrs().map(String) })
    },
    nodes: { call: async () => await host.receipts.presence.fill(nodeList(host)) }, // remote nodes' presence from their hosts
    'node.add': {
      call: async (p) => {
        const node = await host.registry.add(p.name, p.parent)
        return { id: node.record.id, name: node.record.name, parent: node.record.parent, depth: node.record.depth }
      }
    },
    'node.ensure': {
      call: async (p) => {
        const node = await host.registry.ensure(p.name)
        return { id: node.record.id, name: node.record.name }
      }
    },
    ...receiptMethods(host), // send (with its receipt), receipt.get, receipt.wait
    ...sendBatchMethods(host),
    'inbox.read': readMethod(host, (name) => localNode(host, name)),
    'inbox.follow': {
      stream: async (p, sink) => {
        const id = localNode(host, p.node)
        const after = p.after ?? (await host.inbox.info(id)).cursor
        await follow(host, id, after, sink, p.framing === 'binary')
      }
    },
    ack: {
      call: async (p) => ({ cursor: (await readUpTo(host, localNode(host, p.node), p.seq, 'host')).cursor })
    },
    card: {
      call: async (p) => {
        const t = await host.resolver.resolve(p.target)
        if (t.kind === 'remote') return t.card.card
        // an a2a node's card is the agent's own, as fetched when it was added
        return t.kind === 'a2a' ? t.node.record.a2a?.card ?? {} : host.cards.cardOf(t.node)
      }
    },
    'outbox.dead': {
      call: async (p) => (await host.outbox.deadLetters(p.limit ?? 1000)).map((d) => ({ ...d, packet: undefined, to_name: host.label(d.to), from_name: host.label(d.from) }))
    },
    shutdown: { call: async () => { setImmediate(shutdown); return { stopping: true } } },
    ...aclMethods(host),
    ...discoveryMethods(host),
    ...inboxMethods(host),
    ...consumptionMethods(host),
    ...permissionMethods(host),
    ...agentsMethods(host),
    ...nodeMethods(host, host.agents),
    ...peerMethods(host)
  })
}
