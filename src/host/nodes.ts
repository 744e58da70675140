import type { LocalNode } from '../store/nodes.js'
import type { Host } from './host.js'

/** Implicit registration: the first use of a name on this host creates the node. */
export async function ensureNode (host: Host, name: string): Promise<LocalNode> {
  const existing = host.nodes.get(name)
  if (existing !== undefined) return existing
  return await host.addNode(name)
}
