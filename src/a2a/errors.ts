// The A2A error shapes the face writes itself (auth, bounds, unknown node):
// JSON-RPC error objects for the JSONRPC binding, google.rpc.Status-like
// bodies for HTTP+JSON, as the SDK's own errors look.
import type { Request, Response } from 'express'

export type Binding = 'jsonrpc' | 'rest'

/** JSON-RPC codes: the spec's (-32700 … -32603, A2A -32001 …) and amesh's implementation-defined ones. */
export const RPC = {
  parse: -32700,
  invalidRequest: -32600,
  internal: -32603,
  taskNotFound: -32001,
  versionNotSupported: -32009,
  /** amesh: the bearer credential is missing, unknown, expired or revoked (HTTP 401) */
  unauthenticated: -32040,
  /** amesh: the credential does not cover this node (HTTP 403) */
  forbidden: -32041,
  /** amesh: per-credential rate limit (HTTP 429) */
  rateLimited: -32042,
  /** amesh: no such node here (HTTP 404) */
  unknownNode: -32043
} as const

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 413: 'INVALID_ARGUMENT', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL'
}

function rpcId (req: Request): string | number | null {
  const body = req.body as { id?: unknown } | undefined
  const id = body?.id
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

/** Answer an error in the binding's shape, with `reason` as the ErrorInfo detail. */
export function sendError (req: Request, res: Response, binding: Binding, http: number, code: number, reason: string, message: string): void {
  if (res.headersSent) { res.destroy(); return }
  const detail = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'amesh.dev' }
  if (http === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="amesh"')
  if (binding === 'jsonrpc') {
    res.status(http).json({ jsonrpc: '2.0', id: rpcId(req), error: { code, message, data: [detail] } })
  } else {
    res.status(http).json({ error: { code: http, status: STATUS_NAMES[http] ?? 'UNKNOWN', message, details: [detail] } })
  }
}
