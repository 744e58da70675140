// Verifying a delegation chain of capability tokens, root first, ending at
// the sender. Pure: time, revocation and lineage come in through `ctx`.
import type { Signal, Zone } from '../packet/types.js'
import { commandCovers, decodeToken, MAX_TOKEN_BYTES, MSG_SEND_CMD, tokenId, verifyTokenSignature, type Token, type TokenPayload } from './token.js'
import { defaultTokenCache, type TokenCache } from './token-cache.js'

/** Longest delegation chain accepted (a bound, not a depth assumption). */
export const MAX_CHAIN_LINKS = 16

export const TOKEN_REASONS = [
  'TOKEN_MALFORMED', 'TOKEN_CHAIN_TOO_LONG', 'TOKEN_SIGNATURE', 'TOKEN_REVOKED', 'TOKEN_EXPIRED',
  'TOKEN_NOT_YET_VALID', 'TOKEN_SUBJECT', 'TOKEN_ISSUER', 'TOKEN_CHAIN_BROKEN', 'TOKEN_WIDENED',
  'TOKEN_AUDIENCE', 'TOKEN_COMMAND', 'TOKEN_SIGNAL', 'TOKEN_ZONE'
] as const
export type TokenReason = typeof TOKEN_REASONS[number]

export interface ChainContext {
  /** the sending node id: the final audience */
  readonly sender: string
  /** the target node id: the subject of every link */
  readonly target: string
  readonly signal: Signal
  readonly zone: Zone
  /** ms since the epoch */
  readonly now: number
  /**
   * True when a valid revocation names `tokenId`. `issuers` are the issuers of
   * the link and every link above it: a revocation counts only when its
   * revoker is one of them (see `revocationApplies`).
   */
  readonly isRevoked: (tokenId: string, issuers: readonly string[]) => boolean
  /** True when `issuerId` is `subId` or one of its verified ancestors. */
  readonly speaksFor: (issuerId: string, subId: string) => boolean
  /** command the send needs; default `/msg/send` */
  readonly cmd?: string
  /** verified-token cache; default the process-wide one */
  readonly cache?: TokenCache
}

export interface ChainLink {
  readonly id: string
  readonly token: Token
}

export type ChainResult =
  | { readonly ok: true, readonly links: readonly ChainLink[], readonly exp: number }
  | { readonly ok: false, readonly code: TokenReason, readonly reason: string, readonly index?: number }

type Failure = Extract<ChainResult, { ok: false }>

function fail (code: TokenReason, reason: string, index?: number): Failure {
  return index === undefined ? { ok: false, code, reason } : { ok: false, code, reason: `link ${index}: ${reason}`, index }
}

export function verifyChain (chainBytes: readonly Uint8Array[], ctx: ChainContext): ChainResult {
  if (chainBytes.length === 0) return fail('TOKEN_MALFORMED', 'empty grant chain')
  if (chainBytes.length > MAX_CHAIN_LINKS) return fail('TOKEN_CHAIN_TOO_LONG', `grant chain has ${chainBytes.length} links, limit ${MAX_CHAIN_LINKS}`)
  const links: ChainLink[] = []
  for (let i = 0; i < chainBytes.length; i++) {
    const link = loadLink(chainBytes[i], ctx.cache ?? defaultTokenCache)
    if ('code' in link) return { ...link, reason: `link ${i}: ${link.reason}`, index: i }
    links.push(link)
  }
  const failure = checkLinksLive(links, ctx) ?? checkStructure(links, ctx) ?? checkRequest(links, ctx)
  if (failure !== undefined) return failure
  return { ok: true, links, exp: Math.min(...links.map((l) => l.token.payload.exp)) }
}

/** The earliest expiry (exclusive) of a chain's links, or undefined when a link does not load. */
export function chainExpiry (chainBytes: readonly Uint8Array[], cache: TokenCache = defaultTokenCache): number | undefined {
  let exp = Infinity
  for (const bytes of chainBytes) {
    const link = loadLink(bytes, cache)
    if ('code' in link) return undefined
    exp = Math.min(exp, link.token.payload.exp)
  }
  return exp === Infinity ? undefined : exp
}

/** Decode and verify one link, or take it from the verified cache. */
export function loadLink (bytes: Uint8Array, cache: TokenCache): ChainLink | Failure {
  if (!(bytes instanceof Uint8Array) || bytes.length > MAX_TOKEN_BYTES) return fail('TOKEN_MALFORMED', 'token missing or over the size limit')
  const id = tokenId(bytes)
  const cached = cache.get(id)
  if (cached !== undefined) return { id, token: cached }
  let token: Token
  try {
    token = decodeToken(bytes)
  } catch (err) {
    return fail('TOKEN_MALFORMED', err instanceof Error ? err.message : 'undecodable token')
  }
  if (!verifyTokenSignature(token)) return fail('TOKEN_SIGNATURE', `token ${id} not signed by its issuer ${token.payload.iss}`)
  cache.set(id, token)
  return { id, token }
}

function checkLinksLive (links: readonly ChainLink[], ctx: ChainContext): Failure | undefined {
  for (let i = 0; i < links.length; i++) {
    const issuers = links.slice(0, i + 1).map((l) => l.token.payload.iss)
    if (ctx.isRevoked(links[i].id, issuers)) return fail('TOKEN_REVOKED', `token ${links[i].id} was revoked`, i)
    const timeFailure = checkTime(links[i].token.payload, ctx.now, i)
    if (timeFailure !== undefined) return timeFailure
  }
  return undefined
}

function checkTime (p: TokenPayload, now: number, i: number): Failure | undefined {
  if (p.nbf !== undefined && now < p.nbf) return fail('TOKEN_NOT_YET_VALID', `not valid before ${new Date(p.nbf).toISOString()}`, i)
  if (now >= p.exp) return fail('TOKEN_EXPIRED', `expired at ${new Date(p.exp).toISOString()}`, i)
  return undefined
}

function checkStructure (links: readonly ChainLink[], ctx: ChainContext): Failure | undefined {
  const payloads = links.map((l) => l.token.payload)
  const badSub = payloads.findIndex((p) => p.sub !== ctx.target)
  if (badSub >= 0) return fail('TOKEN_SUBJECT', `subject ${payloads[badSub].sub} is not the target ${ctx.target}`, badSub)
  const root = payloads[0]
  if (root.iss !== root.sub && !ctx.speaksFor(root.iss, root.sub)) {
    return fail('TOKEN_ISSUER', `root issuer ${root.iss} does not speak for ${root.sub}`, 0)
  }
  for (let i = 1; i < payloads.length; i++) {
    if (payloads[i - 1].aud !== payloads[i].iss) {
      return fail('TOKEN_CHAIN_BROKEN', `issuer ${payloads[i].iss} is not the audience ${payloads[i - 1].aud} of link ${i - 1}`, i)
    }
    const widened = widening(payloads[i - 1], payloads[i])
    if (widened !== undefined) return fail('TOKEN_WIDENED', widened, i)
  }
  return undefined
}

/** Why `child` grants more than `parent`, or undefined when it only narrows. */
export function widening (parent: TokenPayload, child: TokenPayload): string | undefined {
  if (!commandCovers(parent.cmd, child.cmd)) return `cmd ${child.cmd} is not within ${parent.cmd}`
  if (!isSubset(parent.pol.signals, child.pol.signals)) return 'signals widen the delegating token\'s signals'
  if (!isSubset(parent.pol.zones, child.pol.zones)) return 'zones widen the delegating token\'s zones'
  if (child.exp > parent.exp) return 'expires later than the delegating token'
  return undefined
}

/** `child` ⊆ `parent`, where an absent list means "any". */
function isSubset<T> (parent: readonly T[] | undefined, child: readonly T[] | undefined): boolean {
  if (parent === undefined) return true
  if (child === undefined) return false
  return child.every((item) => parent.includes(item))
}

function checkRequest (links: readonly ChainLink[], ctx: ChainContext): Failure | undefined {
  const last = links.length - 1
  const finalAud = links[last].token.payload.aud
  if (finalAud !== ctx.sender) return fail('TOKEN_AUDIENCE', `final audience ${finalAud} is not the sender ${ctx.sender}`, last)
  const cmd = ctx.cmd ?? MSG_SEND_CMD
  for (let i = 0; i < links.length; i++) {
    const p = links[i].token.payload
    if (!commandCovers(p.cmd, cmd)) return fail('TOKEN_COMMAND', `cmd ${p.cmd} does not cover ${cmd}`, i)
    if (!allows(p.pol.signals, ctx.signal)) return fail('TOKEN_SIGNAL', `signal ${ctx.signal} not granted`, i)
    if (!allows(p.pol.zones, ctx.zone)) return fail('TOKEN_ZONE', `zone ${ctx.zone} not granted`, i)
  }
  return undefined
}

function allows<T> (list: readonly T[] | undefined, item: T): boolean {
  return list === undefined || list.includes(item)
}
