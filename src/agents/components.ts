// What the managed-node service takes from its host, in small pieces: each
// file of src/agents names the ones it uses (CommsComponents,
// HostGrantComponents, ManagerComponents, PlacementComponents). The host's
// composition root builds them; nothing here reaches into the host itself.
import type { AclStore, ChainRecord } from '../authz/acl-store.js'
import type { GrantRequest } from '../authz/acl-service.js'

/** A node resolved by name or id: served by this host, or by another one (its peer id). */
export type NodeTarget =
  | { kind: 'local', id: string }
  | { kind: 'remote', id: string, host: string }
  /** an external A2A agent registered here (`amesh node add-a2a`) */
  | { kind: 'a2a', id: string }

/** The host's resolution of a node name or id (local nodes, known cards, connected hosts, the DHT). */
export type ResolveNode = (target: string) => Promise<NodeTarget>

/** The parts of the host's ACL service that managed nodes use. */
export interface AgentsAcl {
  /** grants held and issued here, revocations */
  store: Pick<AclStore, 'allIssued' | 'allHeld' | 'revocationsOf' | 'issue' | 'hold'>
  /** issue a grant as a local node and hand it to the audience's host */
  grant: (req: GrantRequest) => Promise<ChainRecord & { handed: boolean }>
  /** whether a valid revocation applies to a chain */
  isChainRevoked: (chain: readonly Uint8Array[]) => boolean
}
