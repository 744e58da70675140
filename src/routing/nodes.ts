import type { LocalNode, NodeStore } from '../store/nodes.js'

/** Creates a node (under a local parent, which signs its lineage certificate): the ACL service. */
export interface NodeCreator { createChild: (name: string, parent?: string) => Promise<LocalNode> }

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

  /** Implicit registration: the first use of a name on this host creates the node. */
  async ensure (name: string): Promise<LocalNode> {
    return this.components.nodes.get(name) ?? await this.add(name)
  }

  /** Tell connected hosts (and the DHT, when it runs) about a new or changed local node. */
  announce (): void {
    for (const a of this.components.announcers) a.announce()
  }
}
