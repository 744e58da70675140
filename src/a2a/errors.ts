// The A2A error shapes the face writes itself (auth, bounds, unknown node):
// JSON-RPC error objects for the JSONRPC binding, google.rpc.Status-like
// bodies for HTTP+JSON, as the SDK's own errors look. Written on node:http's
// own request and response (express's extend them), so both the JSON-RPC
// adapter (jsonrpc.ts) and the express routes use them.
import type { IncomingMessage, ServerResponse } from 'node:http'

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

/** The parsed body of a request, when one was read (body-parser sets `req.body`). */
export function bodyOf (req: IncomingMessage): unknown {
  return (req as { body?: unknown }).body
}

function rpcId (req: IncomingMessage): string | number | null {
  const id = (bodyOf(req) as { id?: unknown } | undefined)?.id
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

/** Answer an error in the binding's shape, with `reason` as the ErrorInfo detail. */
/** A JSON response, as express's res.json writes it (a Content-Type set before is kept). */
export function sendJson (res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.statusCode = status
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'))
  res.end(text)
}

export function sendError (req: IncomingMessage, res: ServerResponse, binding: Binding, http: number, code: number, reason: string, message: string): void {
  if (res.headersSent) { res.destroy(); return }
  const detail = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'amesh.dev' }
  if (http === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="amesh"')
  if (binding === 'jsonrpc') {
    sendJson(res, http, { jsonrpc: '2.0', id: rpcId(req), error: { code, message, data: [detail] } })
  } else {
    sendJson(res, http, { error: { code: http, status: STATUS_NAMES[http] ?? 'UNKNOWN', message, details: [detail] } })
  }
}
