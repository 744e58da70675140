// Broadcast to a group: one durable copy per member, each sent through the
// ordinary send pipeline (resolve, sender-side ACL check, transport), so each
// is gated by its receiver exactly as a direct send is, and each member's
// inbox, cursor and dedup stay its own. The copies share one broadcast id
// (the packet's `broadcast` field) and name the group's head (`group`).
import type { CardExchange } from '../discovery/cards-protocol.js'
import type { Directory } from '../discovery/directory.js'
import type { BroadcastMember, BroadcastResult } from '../control/wire.js'
import type { NodeStore } from '../store/nodes.js'
import { errorCode, errorMessage, UnknownNodeError } from '../util/errors.js'
import { ulid } from '../util/ulid.js'
import type { NodeRegistry } from './nodes.js'
import type { Resolver } from './resolve.js'
import type { SendRequest, Sender } from './send.js'

/** A node of the comms graph as the broadcast sees it: id, name, verified parent. */
interface Known { id: string, name: string, parent: string | undefined }

export interface BroadcasterComponents {
  registry: Pick<NodeRegistry, 'ensure'>
  resolver: Pick<Resolver, 'resolve'>
  nodes: Pick<NodeStore, 'list'>
  directory: Pick<Directory, 'list'>
  exchange: Pick<CardExchange, 'exchangeUnexchanged'>
  sender: Pick<Sender, 'send'>
}

/** The broadcast call's request: a send request whose `to` is "broadcast" and `group` the head (default: the sender's group). */
export type BroadcastRequest = SendRequest

/** The denial code a sender-side refusal names (acl-check.ts denialError writes "CODE: reason"), else the error's code. */
function refusalCode (err: unknown): string {
  const m = /^([A-Z][A-Z0-9_]+): /.exec(errorMessage(err))
  return m !== null && errorCode(err) === 'ACCESS_DENIED' ? m[1] : errorCode(err)
}

function sameGroup (a: Known, b: Known): boolean {
  return a.id === b.id || a.parent === b.id || b.parent === a.id || (a.parent !== undefined && a.parent === b.parent)
}

export class Broadcaster {
  constructor (private readonly c: BroadcasterComponents) {}

  /** Every node this host knows: its own, then the cards learnt from other hosts. */
  private known (): Map<string, Known> {
    const all = new Map<string, Known>()
    for (const card of this.c.directory.list()) all.set(card.nodeId, { id: card.nodeId, name: card.name, parent: card.parent })
    for (const n of this.c.nodes.list()) all.set(n.record.id, { id: n.record.id, name: n.record.name, parent: n.record.parent })
    return all
  }

  /**
   * The members: for the sender's own group its parent, siblings and
   * children; for the group a head heads, the head and its children. The
   * sender is never a member. Sorted by name, then id.
   */
  private members (self: Known, head: string | undefined, all: Map<string, Known>): Known[] {
    const pick = head === undefined
      ? (n: Known) => n.id === self.parent || n.parent === self.id || (self.parent !== undefined && n.parent === self.parent)
      : (n: Known) => n.id === head || n.parent === head
    return [...all.values()].filter((n) => n.id !== self.id && pick(n)).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1)
  }

  async broadcast (req: BroadcastRequest): Promise<BroadcastResult & { id: string }> {
    const from = await this.c.registry.ensure(req.as)
    const self: Known = { id: from.record.id, name: from.record.name, parent: from.record.parent }
    const head = req.group === undefined ? undefined : (await this.c.resolver.resolve(req.group)).id
    await this.c.exchange.exchangeUnexchanged().catch(() => {}) // learn cards of connected hosts not yet exchanged with
    const all = this.known()
    const members = this.members(self, head, all)
    const headId = head ?? self.parent ?? self.id
    if (members.length === 0) throw new UnknownNodeError(`the group of ${all.get(headId)?.name ?? headId} has no member besides ${self.name} that this host knows`)
    const id = ulid()
    const { group: _g, ...direct } = req
    const results = await Promise.all(members.map(async (m) => await this.copy(self, m, { ...direct, to: m.id }, { broadcast: id, group: headId })))
    return { id, broadcast: id, group: all.get(headId)?.name ?? headId, group_id: headId, members: results }
  }

  private async copy (self: Known, m: Known, req: SendRequest, marks: { broadcast: string, group: string }): Promise<BroadcastMember> {
    try {
      const r = await this.c.sender.send(req, marks)
      return { to: m.name, to_id: m.id, state: r.state, result: r.state, id: r.id, ...(r.seq === undefined ? {} : { seq: r.seq }) }
    } catch (err) {
      let code = refusalCode(err)
      // inside one group every send is allowed unless the receiver blocks the sender: there NO_GRANT can only mean a block (docs/SECURITY.md)
      if (code === 'NO_GRANT' && sameGroup(self, m)) code = 'BLOCKED'
      return { to: m.name, to_id: m.id, state: 'refused', result: `refused: ${code}`, code, reason: errorMessage(err) }
    }
  }
}
