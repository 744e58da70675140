// Who may call: a bearer credential checked by the daemon (`a2a.auth`) for the
// node addressed, and a per-credential rate limit. A refusal answers 401/403
// (429) in the A2A error shape before the SDK sees the request.
import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { A2A_401_CODES } from '../control/a2a-methods.js'
import type { HostCalls } from './in-process.js'
import { errorCode, errorMessage } from '../util/errors.js'
import { A2aCaller, setCaller } from './caller.js'
import { RATE_WINDOW } from './constants.js'
import { RPC, sendError, type Binding } from './errors.js'

const BEARER = /^Bearer\s+(\S+)$/i

class RateLimiter {
  private readonly counts = new Map<string, { start: number, n: number }>()
  constructor (private readonly perWindow: number) {}

  /** true when the credential may make one more request in this window */
  take (key: string, now = Date.now()): boolean {
    let c = this.counts.get(key)
    if (c === undefined || now - c.start >= RATE_WINDOW) {
      if (this.counts.size > 10_000) this.counts.clear()
      c = { start: now, n: 0 }
      this.counts.set(key, c)
    }
    c.n++
    return this.perWindow <= 0 || c.n <= this.perWindow
  }
}

export function authMiddleware (client: HostCalls, ratePerMinute: number) {
  const limiter = new RateLimiter(ratePerMinute)
  return (binding: Binding, node: string) => async (req: IncomingMessage, res: ServerResponse, next: () => void): Promise<void> => {
    const m = BEARER.exec(req.headers.authorization ?? '')
    if (m === null) { sendError(req, res, binding, 401, RPC.unauthenticated, 'A2A_UNAUTHENTICATED', 'a bearer credential is required (amesh grant --to-a2a)'); return }
    const hash = createHash('sha256').update(m[1], 'utf8').digest('hex')
    let who
    try {
      who = await client.call('a2a.auth', { credential: hash, target: node })
    } catch (err) {
      const code = errorCode(err)
      if (A2A_401_CODES.includes(code)) sendError(req, res, binding, 401, RPC.unauthenticated, code, errorMessage(err))
      else if (code === 'UNKNOWN_NODE') sendError(req, res, binding, 404, RPC.unknownNode, code, errorMessage(err))
      else if (code === 'A2A_WRONG_AUDIENCE') sendError(req, res, binding, 403, RPC.forbidden, code, errorMessage(err))
      else sendError(req, res, binding, 500, RPC.internal, code, errorMessage(err))
      return
    }
    if (!limiter.take(hash)) { sendError(req, res, binding, 429, RPC.rateLimited, 'A2A_RATE_LIMITED', `more than ${ratePerMinute} requests a minute on this credential`); return }
    setCaller(req, new A2aCaller(who.name, who.node_id, hash))
    next()
  }
}
