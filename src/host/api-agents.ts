import type { MethodTable } from '../control/server.js'
import type { Host } from './host.js'

/** Control methods of the agents capability. */
export function agentsMethods (_host: Host): MethodTable {
  return {}
}
