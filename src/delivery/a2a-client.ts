// The A2A client side: the official SDK's ClientFactory over a fetch that
// bounds every request (a timeout until the answer's headers, and for a
// plain answer until its body is read; a byte limit on every body) and
// tells an unreachable agent (network error, timeout, HTTP 5xx/429/408)
// from one that answered "no" (an A2A error) or did not speak A2A at all.
import { A2AError } from '@a2a-js/sdk/errors'
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client
} from '@a2a-js/sdk/client'
import type { AgentCard } from '@a2a-js/sdk'
import type { A2aEndpoint } from '../store/nodes.js'
import { AmeshError, defineError, errorMessage } from '../util/errors.js'
import { SECOND } from '../util/time.js'

/** The agent URL is not an http(s) URL. */
export const A2aBadUrlError = defineError('A2aBadUrlError', 'A2A_BAD_URL')
/** The agent's card could not be fetched (unreachable, HTTP error). */
export const A2aCardFetchError = defineError('A2aCardFetchError', 'A2A_CARD_FETCH')
/** What the URL served is not an A2A AgentCard, or an answer is not an A2A answer. */
export const A2aNotAnAgentError = defineError('A2aNotAnAgentError', 'A2A_NOT_AN_AGENT')
/** The card offers no interface this client speaks (JSONRPC, HTTP+JSON). */
export const A2aNoTransportError = defineError('A2aNoTransportError', 'A2A_NO_TRANSPORT')
/** The agent did not answer (network error, timeout, HTTP 5xx/429/408): retried. */
export const A2aUnreachableError = defineError('A2aUnreachableError', 'A2A_UNREACHABLE')
/** An answer's body passed its byte limit. */
export const A2aResponseTooLargeError = defineError('A2aResponseTooLargeError', 'A2A_RESPONSE_TOO_LARGE')

export interface A2aLimits {
  /** until an answer's headers (and a plain answer's body) are in, ms (default 30 s) */
  timeoutMs?: number
  /** the body of a plain answer (and of the card), bytes (default 4 MiB) */
  maxBytes?: number
  /** all events of one stream together, bytes (default 64 MiB; the SDK bounds each event too) */
  maxStreamBytes?: number
}

export const A2A_TIMEOUT = 30 * SECOND
export const A2A_MAX_BYTES = 4 * 1024 * 1024
export const A2A_MAX_STREAM_BYTES = 64 * 1024 * 1024
/** where an A2A agent serves its card, below its base URL */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json'

type Fetch = typeof fetch

/** Errors the body once more than `max` bytes have passed; `done` runs when it ends either way. */
function byteLimit (max: number, url: string, done: () => void): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0
  return new TransformStream({
    transform (chunk, ctl) {
      seen += chunk.byteLength
      if (seen > max) { done(); ctl.error(new A2aResponseTooLargeError(`the answer from ${url} passed ${max} bytes`)); return }
      ctl.enqueue(chunk)
    },
    flush () { done() }
  })
}

const transient = (status: number): boolean => status >= 500 || status === 429 || status === 408

/** A fetch with the limits above; what it throws names the condition. */
export function boundedFetch (limits: A2aLimits = {}): Fetch {
  const timeoutMs = limits.timeoutMs ?? A2A_TIMEOUT
  const maxBytes = limits.maxBytes ?? A2A_MAX_BYTES
  const maxStream = limits.maxStreamBytes ?? A2A_MAX_STREAM_BYTES
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    const ctl = new AbortController()
    const timer = setTimeout(() => ctl.abort(new A2aUnreachableError(`${url} did not answer within ${timeoutMs} ms`)), timeoutMs)
    const signal = init?.signal != null ? AbortSignal.any([init.signal, ctl.signal]) : ctl.signal
    let res: Response
    try {
      res = await fetch(input, { ...init, signal })
    } catch (err) {
      clearTimeout(timer)
      throw err instanceof A2aUnreachableError ? err : new A2aUnreachableError(`${url}: ${errorMessage(err)}${causeText(err)}`, { cause: err })
    }
    if (transient(res.status)) {
      clearTimeout(timer)
      await res.body?.cancel().catch(() => {})
      throw new A2aUnreachableError(`${url} answered HTTP ${res.status}`)
    }
    const stream = res.headers.get('content-type')?.startsWith('text/event-stream') === true
    const limit = stream ? maxStream : maxBytes
    const declared = Number(res.headers.get('content-length') ?? NaN)
    if (declared > limit) {
      clearTimeout(timer)
      await res.body?.cancel().catch(() => {})
      throw new A2aResponseTooLargeError(`the answer from ${url} is ${declared} bytes; the limit is ${limit}`)
    }
    // a stream lives as long as its task: only its start is timed
    if (stream || res.body === null) clearTimeout(timer)
    const body = res.body?.pipeThrough(byteLimit(limit, url, () => clearTimeout(timer))) ?? null
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
  }
}

function causeText (err: unknown): string {
  const cause = (err as { cause?: unknown }).cause
  return cause instanceof Error ? ` (${cause.message})` : ''
}

/** The card URL of what a user gave: a URL ending in .json is the card itself, else a base URL. */
export function cardUrlOf (url: string): URL {
  let u: URL
  try { u = new URL(url) } catch { throw new A2aBadUrlError(`not a URL: ${url} (give the agent's base URL or its card URL, http:// or https://)`) }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new A2aBadUrlError(`not an http(s) URL: ${url}`)
  if (u.username !== '' || u.password !== '') throw new A2aBadUrlError(`credentials in the agent URL are not stored: ${u.origin}${u.pathname}`)
  return u.pathname.endsWith('.json') ? u : new URL(AGENT_CARD_PATH, u)
}

function isInterface (v: unknown): boolean {
  const i = v as { url?: unknown, protocolBinding?: unknown }
  return typeof v === 'object' && v !== null && typeof i.url === 'string' && typeof i.protocolBinding === 'string'
}

/** The shape an A2A 1.0 card must have for a client to use it (a 0.3 card has `url` instead). */
function checkCardShape (raw: unknown, url: string): asserts raw is Record<string, unknown> {
  const c = raw as { name?: unknown, supportedInterfaces?: unknown, url?: unknown }
  const ok = typeof raw === 'object' && raw !== null && !Array.isArray(raw) && typeof c.name === 'string' &&
    ((Array.isArray(c.supportedInterfaces) && c.supportedInterfaces.length > 0 && c.supportedInterfaces.every(isInterface)) || typeof c.url === 'string')
  if (!ok) throw new A2aNotAnAgentError(`${url} did not serve an A2A AgentCard (it needs a name and supportedInterfaces with url and protocolBinding)`)
}

/** Clients of external A2A agents, one per agent (built from its stored card). */
export class A2aClients {
  private readonly fetch: Fetch
  private readonly factory: ClientFactory
  private readonly resolver: DefaultAgentCardResolver
  private readonly clients = new Map<string, { card: Record<string, unknown>, client: Promise<Client> }>()

  constructor (limits: A2aLimits = {}) {
    this.fetch = boundedFetch(limits)
    const fetchImpl = this.fetch
    const legacyCompat = { enabled: true }
    this.resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat })
    this.factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
      cardResolver: this.resolver,
      // a plain (non-streaming) send returns once the agent has the task, not when it is done:
      // the outbox entry is settled by the agent's acceptance, and the task is then polled
      clientConfig: { polling: true }
    }))
  }

  /** Fetch and check an agent's card: it is an A2A card with an interface this client speaks. Nothing is stored. */
  async fetchCard (url: string): Promise<A2aEndpoint> {
    const cardUrl = cardUrlOf(url)
    const res = await this.getCard(cardUrl)
    let raw: unknown
    try { raw = await res.json() } catch (err) {
      if (err instanceof A2aResponseTooLargeError) throw err
      throw new A2aNotAnAgentError(`${cardUrl.href} did not serve JSON: ${errorMessage(err)}`)
    }
    checkCardShape(raw, cardUrl.href)
    await this.build(raw)
    return { cardUrl: cardUrl.href, card: raw }
  }

  private async getCard (cardUrl: URL): Promise<Response> {
    let res: Response
    try {
      res = await this.fetch(cardUrl, { headers: { 'A2A-Version': '1.0', Accept: 'application/json' } })
    } catch (err) {
      throw new A2aCardFetchError(`cannot fetch the agent card at ${cardUrl.href}: ${errorMessage(err)}`, { cause: err })
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {})
      throw new A2aCardFetchError(`cannot fetch the agent card at ${cardUrl.href}: HTTP ${res.status}`)
    }
    return res
  }

  private async build (raw: Record<string, unknown>): Promise<Client> {
    try {
      return await this.factory.createFromAgentCard(raw as unknown as AgentCard)
    } catch (err) {
      const msg = errorMessage(err)
      if (msg.includes('No compatible transport')) throw new A2aNoTransportError(`the agent card offers no interface amesh speaks (JSONRPC, HTTP+JSON): ${msg}`)
      throw new A2aNotAnAgentError(`the agent card cannot be used: ${msg}`)
    }
  }

  /** The client for an agent node (cached; a changed card builds a new one). */
  async clientFor (nodeId: string, endpoint: A2aEndpoint): Promise<Client> {
    const hit = this.clients.get(nodeId)
    if (hit !== undefined && hit.card === endpoint.card) return await hit.client
    const client = this.build(endpoint.card)
    this.clients.set(nodeId, { card: endpoint.card, client })
    client.catch(() => this.clients.delete(nodeId))
    return await client
  }

  forget (nodeId: string): void { this.clients.delete(nodeId) }
}

export { streams } from './a2a-endpoint.js'

/**
 * The dead-letter code of a refusal: amesh's own code where one is in the
 * chain (A2A_RESPONSE_TOO_LARGE, A2A_NOT_AN_AGENT, A2A_AGENT_GONE …),
 * A2A_REJECTED for an A2A error answer, A2A_BAD_ANSWER for an answer that is not A2A.
 */
export function refusalCode (err: unknown): string {
  let a2a = false
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AmeshError) return e.code
    if (e instanceof A2AError) a2a = true
  }
  return a2a ? 'A2A_REJECTED' : 'A2A_BAD_ANSWER'
}

/** Whether an error means "try again later" (the agent did not answer) rather than "it said no". */
export function isTransient (err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof A2aUnreachableError) return true
    if (e instanceof A2AError || e instanceof A2aResponseTooLargeError) return false
    const name = (e as { name?: unknown }).name
    if (name === 'AbortError' || name === 'TimeoutError') return true
  }
  return false
}
