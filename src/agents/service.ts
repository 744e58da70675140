// The managed-node service of one host, built from the components it names:
// the manager (desired state brought back, supervision) and the placement
// protocol (serving and asking other hosts). Neither holds the other: the
// manager asks placement through RemotePlacement, placement asks the
// manager through LocalAgents.
import type { NodeKey } from '../identity/node-key.js'
import type { ChainRecord } from '../authz/acl-store.js'
import type { Startable } from '../util/startable.js'
import { issueHostGrant, type HostGrantComponents, type HostGrantRequest } from './host-grant.js'
import { AgentManager, type ManagerComponents } from './manager.js'
import { Placement, type PlacementComponents } from './placement.js'

export type AgentsComponents = ManagerComponents & PlacementComponents & HostGrantComponents

export interface AgentsService extends Startable {
  /** Bring back desired state: call once the control socket is up, so the nodes can reach it. */
  restore: () => Promise<void>
  /** start, stop, list and heartbeat managed nodes */
  readonly manager: AgentManager
  /** the host-level issuer of host grants */
  readonly issuer: NodeKey
  /** `amesh grant --host`: issue a host grant and hand it to the audience's host */
  issueHostGrant: (req: HostGrantRequest) => Promise<ChainRecord & { handed: boolean, cmd: string }>
}

class Agents implements AgentsService {
  readonly manager: AgentManager
  private readonly placement: Placement
  private started = false

  constructor (private readonly components: AgentsComponents) {
    this.manager = new AgentManager(components, {
      place: async (peer, name, spec, parent) => await this.placement.place(peer, name, spec, parent),
      stopRemote: async (peer, name, parentId) => { await this.placement.stopRemote(peer, name, parentId) }
    })
    this.placement = new Placement(components, this.manager)
  }

  get issuer (): NodeKey { return this.manager.issuer }

  /** Serve placement requests (managed nodes come back with `restore`). */
  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    await this.placement.start()
  }

  async restore (): Promise<void> { await this.manager.restore() }

  /** Daemon shutdown: placement stops being served, processes end; desired state is kept (they come back with the daemon). */
  async stop (): Promise<void> {
    if (!this.started) return
    this.started = false
    await this.placement.stop()
    await this.manager.shutdown()
  }

  async issueHostGrant (req: HostGrantRequest): Promise<ChainRecord & { handed: boolean, cmd: string }> {
    return await issueHostGrant(this.components, this.manager.issuer, req)
  }
}

/** The managed-node service over `components` (not started). */
export function createAgents (components: AgentsComponents): AgentsService {
  return new Agents(components)
}
