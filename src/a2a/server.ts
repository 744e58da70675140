// The A2A face's HTTP server: per node base URL /nodes/NAME/ its signed card
// (.well-known/agent-card.json), the SDK's JSONRPC (jsonrpc) and HTTP+JSON
// (rest) transports over a DefaultRequestHandler with amesh's durable task
// store; GET /nodes lists the nodes served. Each request is authenticated
// (auth.ts) before the SDK sees it; bodies and SSE buffers are bounded.
// `POST /nodes/NAME/jsonrpc` (every JSON-RPC call) is served on node:http
// directly (jsonrpc.ts); everything else goes through express.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import express, { type NextFunction, type Request, type Response } from 'express'
import { AgentCard } from '@a2a-js/sdk'
import { DefaultExecutionEventBusManager, DefaultRequestHandler } from '@a2a-js/sdk/server'
import { restHandler } from '@a2a-js/sdk/server/express'
import type { HostCalls } from './in-process.js'
import { errorMessage } from '../util/errors.js'
import { SECOND } from '../util/time.js'
import { authMiddleware } from './auth.js'
import { JSON_TYPES, JsonBodyReader } from './body.js'
import { buildUser } from './caller.js'
import { NODE_EXTENSION_URI } from './constants.js'
import { boundWrites } from './output-bound.js'
import { RPC, sendError, type Binding } from './errors.js'
import { NodeExecutor } from './executor.js'
import { JsonRpcEndpoint } from './jsonrpc.js'
import type { TaskJournal } from './journal.js'
import { resumeMiddleware } from './resume.js'
import { ControlTaskStore } from './task-store.js'

/** A node's handler is rebuilt from a fresh card this often (cards are re-signed hourly). */
const NODE_TTL = 30 * SECOND

export interface FaceDeps {
  client: HostCalls
  journal: TaskJournal
  follow: (client: string) => void
  bodyLimit: number
  ratePerMinute: number
}

type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => Promise<void>

interface NodeFace {
  at: number
  card: Record<string, unknown>
  /** the JSON-RPC endpoint, and the same behind express (paths and methods the direct route does not take) */
  rpc: JsonRpcEndpoint
  resume: Middleware
  jsonrpc: express.Router
  rest: express.Router
}

/** The card the SDK's handler checks requests against: the face does not require amesh's node extension of A2A callers. */
function handlerCard (signed: Record<string, unknown>): AgentCard {
  const card = AgentCard.fromJSON(signed)
  for (const e of card.capabilities?.extensions ?? []) if (e.uri === NODE_EXTENSION_URI) e.required = false
  return card
}

class Faces {
  private readonly faces = new Map<string, NodeFace>()
  private readonly buses = new Map<string, DefaultExecutionEventBusManager>()
  private readonly auth: ReturnType<typeof authMiddleware>
  /** the JSON body, read as the express chain of the JSONRPC binding reads it */
  private readonly rpcBody: JsonBodyReader

  constructor (private readonly d: FaceDeps) {
    this.auth = authMiddleware(d.client, d.ratePerMinute)
    this.rpcBody = new JsonBodyReader(d.bodyLimit)
  }

  /** The node's face, or undefined when it is not a node of this host. */
  async get (name: string): Promise<NodeFace | undefined> {
    const hit = this.faces.get(name)
    if (hit !== undefined && Date.now() - hit.at < NODE_TTL) return hit
    const resolved = await this.d.client.call('node.resolve', { target: name }).catch(() => undefined)
    if (resolved?.local !== true || resolved.name !== name) { this.faces.delete(name); return undefined }
    const card = await this.d.client.call('card', { target: name }) as Record<string, unknown>
    const face = this.build(name, card)
    this.faces.set(name, face)
    return face
  }

  private build (name: string, card: Record<string, unknown>): NodeFace {
    const buses = this.buses.get(name) ?? new DefaultExecutionEventBusManager()
    this.buses.set(name, buses)
    const handler = new DefaultRequestHandler(handlerCard(card), new ControlTaskStore(this.d.client, this.d.journal.tasks, name), new NodeExecutor(this.d.client, this.d.journal, name, this.d.follow), buses)
    const rpc = new JsonRpcEndpoint(handler)
    const direct: express.RequestHandler = (req, res, next) => {
      if (req.method === 'POST' && req.path === '/') void rpc.serve(req, res)
      else next()
    }
    return {
      at: Date.now(),
      card,
      rpc,
      resume: resumeMiddleware(this.d.client, this.d.journal, name, 'jsonrpc'),
      jsonrpc: this.chain(name, 'jsonrpc', direct),
      rest: this.chain(name, 'rest', restHandler({ requestHandler: handler, userBuilder: buildUser }))
    }
  }

  /**
   * `POST /nodes/NAME/jsonrpc` without express, in the order of the express
   * chain: the node, the body (bounded), the credential, the resume
   * extension, then the SDK's JSON-RPC transport (jsonrpc.ts).
   */
  async serveRpc (name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const face = await this.get(name)
    if (face === undefined) { sendError(req, res, 'jsonrpc', 404, RPC.unknownNode, 'UNKNOWN_NODE', `no node named ${name} on this host`); return }
    const bodyErr = await this.rpcBody.read(req, res)
    if (bodyErr !== undefined) { bodyError(bodyErr, req, res, 'jsonrpc'); return }
    if (!await passes(this.auth('jsonrpc', name), req, res)) return
    if (!await passes(face.resume, req, res)) return
    await face.rpc.serve(req, res)
  }

  private chain (name: string, binding: Binding, sdk: express.RequestHandler): express.Router {
    const r = express.Router()
    r.use(express.json({ limit: this.d.bodyLimit, type: JSON_TYPES, strict: binding === 'jsonrpc' }))
    r.use(asyncMw(this.auth(binding, name)))
    r.use(asyncMw(resumeMiddleware(this.d.client, this.d.journal, name, binding)))
    r.use(sdk)
    r.use((err: unknown, req: Request, res: Response, _next: NextFunction) => { bodyError(err, req, res, binding) })
    return r
  }
}

function asyncMw (fn: (req: Request, res: Response, next: NextFunction) => Promise<void>): express.RequestHandler {
  return (req, res, next) => { fn(req, res, next).catch(next) }
}

/** Run a middleware outside express: true when it passed the request on. */
async function passes (mw: Middleware, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  let next = false
  await mw(req, res, () => { next = true })
  return next
}

/** Malformed or oversized bodies get the binding's error (JSON-RPC: -32700 parse error). */
function bodyError (err: unknown, req: IncomingMessage, res: ServerResponse, binding: Binding): void {
  const type = (err as { type?: string }).type
  if (type === 'entity.too.large') sendError(req, res, binding, 413, RPC.invalidRequest, 'BODY_TOO_LARGE', errorMessage(err))
  else if (type === 'entity.parse.failed') sendError(req, res, binding, binding === 'jsonrpc' ? 200 : 400, RPC.parse, 'PARSE_ERROR', `malformed JSON: ${errorMessage(err)}`)
  else sendError(req, res, binding, 500, RPC.internal, 'INTERNAL', errorMessage(err))
}

/** Every response of the express app is bounded as the JSON-RPC ones are (output-bound.ts). */
function boundOutput (_req: Request, res: Response, next: NextFunction): void {
  boundWrites(res)
  next()
}

/** The face's request listener: JSON-RPC calls directly, the rest through express. */
export function buildHandler (d: FaceDeps, baseUrl: () => string): RequestListener {
  const faces = new Faces(d)
  const app = buildApp(d, baseUrl, faces)
  return (req, res) => {
    const name = rpcTarget(req)
    if (name === undefined) { app(req, res); return }
    boundWrites(res)
    faces.serveRpc(name, req, res).catch((err: unknown) => { sendError(req, res, 'jsonrpc', 500, RPC.internal, 'INTERNAL', errorMessage(err)) })
  }
}

const RPC_PATH = /^\/nodes\/([^/?]+)\/jsonrpc\/?(?:\?|$)/

/** The node a `POST /nodes/NAME/jsonrpc` calls, or undefined for any other request. */
function rpcTarget (req: IncomingMessage): string | undefined {
  if (req.method !== 'POST') return undefined
  const m = RPC_PATH.exec(req.url ?? '')
  if (m === null) return undefined
  try { return decodeURIComponent(m[1]) } catch { return undefined }
}

function buildApp (d: FaceDeps, baseUrl: () => string, faces: Faces): express.Express {
  const app = express()
  app.disable('x-powered-by')
  app.use(boundOutput)
  app.get('/nodes', asyncMw(async (_req, res) => { res.json(await nodeList(d.client, baseUrl())) }))
  app.use('/nodes/:name', asyncMw(async (req, res, next) => {
    const name = String(req.params.name)
    const face = await faces.get(name)
    const binding: Binding = req.path.startsWith('/rest') ? 'rest' : 'jsonrpc'
    if (face === undefined) { sendError(req, res, binding, 404, RPC.unknownNode, 'UNKNOWN_NODE', `no node named ${name} on this host`); return }
    if (req.method === 'GET' && req.path === '/.well-known/agent-card.json') { res.json(face.card); return }
    const sub = /^\/(jsonrpc|rest)(\/.*)?$/.exec(req.path)
    if (sub === null) { sendError(req, res, binding, 404, RPC.unknownNode, 'NOT_FOUND', `no such path ${req.path}`); return }
    req.url = req.url.slice(sub[1].length + 1) || '/'
    if (!req.url.startsWith('/')) req.url = '/' + req.url
    ;(sub[1] === 'jsonrpc' ? face.jsonrpc : face.rest)(req, res, next)
  }))
  return app
}

/** The host's list of the nodes it serves (A2A clients left out), each with its A2A base URL. */
async function nodeList (client: HostCalls, baseUrl: string): Promise<{ nodes: Array<{ name: string, id: string, url: string }> }> {
  const [rows, info] = await Promise.all([client.call('node.list'), client.call('a2a.info')])
  const clients = new Set(info.clients)
  return {
    nodes: rows.filter((r) => !clients.has(r.name)).map((r) => ({ name: r.name, id: r.id, url: `${baseUrl}/nodes/${encodeURIComponent(r.name)}/` }))
  }
}
