import type { MethodTable } from '../control/server.js'
import type { Host } from './host.js'

/** Control methods of the discovery capability. */
export function discoveryMethods (_host: Host): MethodTable {
  return {}
}
