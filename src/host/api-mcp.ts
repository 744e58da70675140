import type { MethodTable } from '../control/server.js'
import type { Host } from './host.js'

/** Control methods of the mcp capability. */
export function mcpMethods (_host: Host): MethodTable {
  return {}
}
