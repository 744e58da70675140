import type { A2aEndpoint, LocalNode, NodeStore } from '../store/nodes.js'
import { defineError } from '../util/errors.js'

/** `send --as` (or a session) named an a2a node: its messages come from the agent, over A2A. */
export const A2aNodeCannotSendError = defineError('A2aNodeCannotSendError', 'A2A_NODE_CANNOT_SEND')

/** The node, when it may send (an a2a node may not). */
function sender (name: string, node: LocalNode): LocalNode {
  if (node.record.kind === 'a2a') throw new A2aNodeCannotSendError(`${name} is an external A2A agent: it answers messages sent to it, it does not send as an amesh node`)
  return node
}

/** Creates a node (under a local parent, which signs its lineage certificate): the ACL service. */
export interface NodeCreator { createChild: (name: string, parent?: string, a2a?: A2aEndpoint) => Promise<LocalNode> }

/** Tells other hosts that a local node appeared or changed (card exchange, DHT, gossip). */
export interface Announcer { announce: () => void }

export interface NodeRegistryComponents {
  nodes: Pick<NodeStore, 'get'>
  creator: NodeCreator
  announcers: readonly Announcer[]
}

/** The local nodes as a face sees them: `amesh node add`, and implicit registration on first use. */
export class NodeRegistry {
  constructor (private readonly components: NodeRegistryComponents) {}

  /** `amesh node add`: create a node, with a parent when given, and announce it. */
  async add (name: string, parent?: string): Promise<LocalNode> {
    const node = await this.components.creator.createChild(name, parent)
    this.announce()
    return node
  }

  /**
   * `amesh node add-a2a`: an external A2A agent as a node of this host (its
   * card already fetched and checked). It is not announced: other hosts
   * reach amesh nodes, and this one is reached over A2A from here.
   */
  async addA2a (name: string, endpoint: A2aEndpoint, parent?: string): Promise<LocalNode> {
    return await this.components.creator.createChild(name, parent, endpoint)
  }

  /** Implicit registration: the first use of a name on this host creates the node. */
  async ensure (name: string): Promise<LocalNode> {
    return this.known(name) ?? sender(name, await this.add(name))
  }

  /** ensure for a node that exists: without waiting (the send path's every send); undefined when ensure must create it. */
  known (name: string): LocalNode | undefined {
    const node = this.components.nodes.get(name)
    return node === undefined ? undefined : sender(name, node)
  }

  /** Tell connected hosts (and the DHT, when it runs) about a new or changed local node. */
  announce (): void {
    for (const a of this.components.announcers) a.announce()
  }
}
