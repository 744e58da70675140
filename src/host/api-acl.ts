import type { MethodTable } from '../control/server.js'
import type { Host } from './host.js'

/** Control methods of the acl capability. */
export function aclMethods (_host: Host): MethodTable {
  return {}
}
