// The JSONRPC binding served on node:http itself. The A2A work is the SDK's:
// its JsonRpcTransportHandler over the node's DefaultRequestHandler, its
// version check, call context, error mapping and SSE framing, applied in the
// order of the SDK's own express jsonRpcHandler (@a2a-js/sdk/server/express).
// What is left out is express: its router, request/response decorations and
// res.json were about a fifth of the daemon's CPU per SendMessage
// (docs/PERFORMANCE.md, "Session 6, A2A"). The HTTP+JSON binding stays on the
// SDK's express restHandler: its REST transport handler is not exported.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { A2A_VERSION_HEADER, Extensions, formatSSEErrorEvent, formatSSEEvent, HTTP_EXTENSION_HEADER, SSE_HEADERS } from '@a2a-js/sdk'
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors'
import { defaultServerCallContextBuilder, JsonRpcTransportHandler, validateVersion, type A2ARequestHandler } from '@a2a-js/sdk/server'
import { buildUser } from './caller.js'
import { bodyOf, sendJson } from './errors.js'

/** JSON-RPC internal error: a server fault, answered with HTTP 500 as the SDK does. */
const INTERNAL_ERROR = -32603

type RpcResponse = Record<string, unknown>
type RpcStream = AsyncGenerator<RpcResponse, void, undefined>

function header (req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()]
  return Array.isArray(v) ? v.join(', ') : v
}

/** The id an error answers, as the SDK's handler takes it (`body.id || null`: a falsy id, 0 or '', becomes null). */
function errorId (req: IncomingMessage): unknown {
  const id = (bodyOf(req) as { id?: unknown } | undefined)?.id
  return Boolean(id) ? id : null
}

/** A header's value, an empty one as absent (the SDK's `req.header(...) || undefined`). */
function nonEmpty (v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v
}

function isStream (r: unknown): r is RpcStream {
  return typeof (r as RpcStream | undefined)?.[Symbol.asyncIterator] === 'function'
}

/** The SDK's JSON-RPC Content-Type guard: a body declared other than application/json is refused (HTTP 200, ContentTypeNotSupported). */
function contentTypeRefused (req: IncomingMessage): string | undefined {
  const raw = header(req, 'content-type')
  if (raw === undefined || raw === '') return undefined
  return raw.split(';', 1)[0].trim().toLowerCase() === 'application/json' ? undefined : raw
}

/** One node's JSON-RPC endpoint: what the SDK's jsonRpcHandler does for `POST /`, on a request whose body is read and whose caller is authenticated. */
export class JsonRpcEndpoint {
  private readonly transport: JsonRpcTransportHandler

  constructor (private readonly handler: A2ARequestHandler) {
    this.transport = new JsonRpcTransportHandler(handler)
  }

  async serve (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = contentTypeRefused(req)
    if (refused !== undefined) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(new ContentTypeNotSupportedError(`Unsupported Content-Type "${refused}"; expected application/json.`))
      sendJson(res, 200, { jsonrpc: '2.0', id: null, error })
      return
    }
    try {
      const context = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(header(req, HTTP_EXTENSION_HEADER)),
        user: await buildUser(req),
        headers: req.headers,
        requestedVersion: nonEmpty(header(req, A2A_VERSION_HEADER))
      })
      validateVersion(context.requestedVersion, await this.handler.getAgentCard(), 'JSONRPC')
      const out = await this.transport.handle(bodyOf(req) as Record<string, unknown>, context)
      if (context.activatedExtensions !== undefined) res.setHeader(HTTP_EXTENSION_HEADER, Array.from(context.activatedExtensions))
      if (isStream(out)) await this.stream(req, res, out)
      else sendJson(res, 200, out)
    } catch (err) {
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err)
      if (!res.headersSent) sendJson(res, error.code === INTERNAL_ERROR ? 500 : 200, { jsonrpc: '2.0', id: errorId(req), error })
      else if (!res.writableEnded) res.end()
    }
  }

  /** SSE, as the SDK writes it: an error before the first event is a plain JSON-RPC error; after it, an `event: error`. */
  private async stream (req: IncomingMessage, res: ServerResponse, stream: RpcStream): Promise<void> {
    let first: IteratorResult<RpcResponse, void>
    try {
      first = await stream.next()
    } catch (err) {
      sendJson(res, 200, { jsonrpc: '2.0', id: errorId(req), error: JsonRpcTransportHandler.mapToJSONRPCError(err) })
      return
    }
    for (const [k, v] of Object.entries(SSE_HEADERS)) res.setHeader(k, v)
    res.flushHeaders()
    try {
      if (first.done !== true) res.write(formatSSEEvent(first.value))
      for (;;) {
        const next = await stream.next()
        if (next.done === true) break
        res.write(formatSSEEvent(next.value))
      }
    } catch (err) {
      if (!res.writableEnded) res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id: errorId(req), error: JsonRpcTransportHandler.mapToJSONRPCError(err) }))
    } finally {
      if (!res.writableEnded) res.end()
      await stream.return?.()
    }
  }
}
