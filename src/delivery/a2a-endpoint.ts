// What an A2A agent's stored card says, readable without the A2A SDK (the
// host loads the SDK only once an A2A agent is in use: src/host/a2a-agents.ts).
import type { A2aEndpoint } from '../store/nodes.js'

/** Whether the agent's card says it streams (then answers come over SSE). */
export function streams (endpoint: A2aEndpoint): boolean {
  const caps = endpoint.card.capabilities as { streaming?: unknown } | undefined
  return caps?.streaming === true
}
