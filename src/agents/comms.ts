// comms.allow compiled into grants the managed node issues when it starts:
// one grant per entry, issued only when no live grant of the same shape exists.
import type { LocalNode } from '../store/nodes.js'
import { errorMessage } from '../util/errors.js'
import type { AgentsAcl, ResolveNode } from './components.js'
import type { AllowEntry } from './spec.js'
import { HOUR } from '../util/time.js'

export interface CommsComponents {
  acl: { store: Pick<AgentsAcl['store'], 'allIssued'>, grant: AgentsAcl['grant'], isChainRevoked: AgentsAcl['isChainRevoked'] }
  resolve: ResolveNode
}

function sameList (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return a.length === b.length && a.every((x) => b.includes(x))
}

function hasLiveGrant (acl: CommsComponents['acl'], node: LocalNode, audience: string, entry: AllowEntry): boolean {
  const soon = Date.now() + HOUR
  return acl.store.allIssued().some((r) => r.iss === node.record.id && r.sub === node.record.id && r.aud === audience &&
    r.exp > soon && r.chain.length === 1 && sameList(r.signals, entry.signals) && sameList(r.zones, entry.zones) &&
    !acl.isChainRevoked(r.chain))
}

/** Issue the spec's grants; returns one line per entry (granted / kept / failed) for the node's log. */
export async function compileAllow (components: CommsComponents, node: LocalNode, allow: AllowEntry[]): Promise<string[]> {
  const lines: string[] = []
  for (const entry of allow) {
    try {
      const audience = await components.resolve(entry.node)
      if (hasLiveGrant(components.acl, node, audience.id, entry)) { lines.push(`comms.allow ${entry.node}: grant already in place`); continue }
      const r = await components.acl.grant({ as: node.record.name, to: entry.node, signals: entry.signals, zones: entry.zones })
      lines.push(`comms.allow ${entry.node}: granted ${r.id}${r.handed ? '' : ' (handed over when its host connects)'}`)
    } catch (err) {
      lines.push(`comms.allow ${entry.node}: not granted: ${errorMessage(err)}`)
    }
  }
  return lines
}
