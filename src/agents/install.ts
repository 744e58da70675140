// Wires managed nodes into a started host: the manager (desired state brought
// back), the placement protocol, and shutdown with the daemon.
import type { Host } from '../host/host.js'
import { AgentManager } from './manager.js'
import { Placement } from './placement.js'

const installed = new WeakMap<Host, AgentManager>()

export function agentsOf (host: Host): AgentManager | undefined {
  return installed.get(host)
}

/** Install into a started host (call `restore()` once the control socket is up, so the nodes can reach it). Idempotent. */
export async function installAgents (host: Host): Promise<AgentManager> {
  const existing = installed.get(host)
  if (existing !== undefined) return existing
  const manager = new AgentManager(host)
  manager.placement = new Placement(host, manager)
  installed.set(host, manager)
  await manager.placement.start()
  return manager
}
