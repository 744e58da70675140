import type { Libp2p } from '@libp2p/interface'
import { signalPayloadProblem } from '../packet/rules.js'
import { DEFAULT_DESTINATIONS, SIGNAL_DESTINATION, SignalDestinationError, destinationProblem, hasDestinationRule, proofParent, type DestinationPolicy } from './signal-destination.js'
import { peerIdFromString } from '@libp2p/peer-id'
import { checkDepthPolicy, decodeToken, narrowingHint, speaksForFrom, encodeLineage, encodeRevocation, encodeToken, issueLineage, issueRevocation, issueToken, validateProfile, verifyLineage, widening, type LineageCert, type Profile, type TokenPolicy } from '../acl/index.js'
import type { CardExchange } from '../discovery/cards-protocol.js'
import type { Directory } from '../discovery/directory.js'
import type { Admission } from '../delivery/service.js'
import type { Notices } from '../delivery/notices.js'
import type { Denial } from '../delivery/receiver.js'
import type { Packet, Signal, Zone } from '../packet/types.js'
import type { Committer, RawDb } from '../store/db.js'
import type { A2aEndpoint, LocalNode, NodeStore } from '../store/nodes.js'
import { ConfigError, InvalidArgumentError, NameCollisionError, UnknownNodeError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { NodeCreator } from '../routing/nodes.js'
import type { Resolver, Target } from '../routing/resolve.js'
import type { SendAuthorizer } from '../routing/send.js'
import { checkReceive, checkSend, denialError, type ReceiveCache, type SendAllow } from './acl-check.js'
import { DecisionCache } from './decision-cache.js'
import { AclStore, type ChainRecord } from './acl-store.js'
import { GrantExchange, type GrantBundle } from './grant-exchange.js'
import { encodeLineagePath, lineagePathOf, localAncestors } from './lineage-path.js'
import { RevocationIntake } from './revocation-intake.js'
import { RevocationPolicy, type SpeaksFor } from './revocation-policy.js'
import type { AclPolicy, AnswerLookup } from './acl-policy.js'

export type { AclPolicy, AnswerLookup } from './acl-policy.js'

export interface GrantRequest { as: string, to: string, sub?: string, signals?: Signal[], zones?: Zone[], expiresMs?: number, delegate?: string }

const HOST_LEVEL = new Set(['CHANNEL_BINDING', 'NOT_SERVED_HERE'])

function notServedHere (packet: Packet): Denial {
  return { code: 'NOT_SERVED_HERE', reason: `node ${packet.to} is not served by this host` }
}
const HAND_RETRIES = 5
const DEFAULT_GRANT_LIFETIME = 30 * 24 * 3600 * 1000

export interface AclComponents {
  db: RawDb
  committer: Committer
  nodes: NodeStore
  directory: Pick<Directory, 'get' | 'hostOf'>
  /** the card exchange, for a sender's card not known yet (channel binding) */
  exchange: Pick<CardExchange, 'exchange'>
  libp2p: Libp2p
  resolver: Pick<Resolver, 'resolve'>
  notices: Pick<Notices, 'notify'>
  label: (nodeId: string) => string
  policy: AclPolicy
  log: Logger
  /** for RETURN's destination rule; without it a RETURN is checked for in_reply_to only */
  answers?: AnswerLookup
}

/**
 * Lineage, grants, revocations, blocks and profiles of one host: the
 * sender-side check of the send pipeline, the admission of packets from
 * remote hosts, and the node creator (a child's lineage certificate).
 */
export class AclService implements SendAuthorizer, Admission, NodeCreator {
  readonly store: AclStore
  private readonly grants: GrantExchange
  private readonly lastNotice = new Map<string, number>()
  /** allow decisions memoised per (from, to, signal, zone[, sender name]) and proof; see decision-cache.ts */
  readonly sendCache: DecisionCache<SendAllow>
  readonly receiveCache: ReceiveCache
  /** who may revoke, which revocations are kept (revocation-policy.ts) */
  readonly revocations: RevocationPolicy
  private readonly intake: RevocationIntake
  private readonly c: AclComponents
  private started = false

  constructor (components: AclComponents) {
    this.c = components
    this.store = new AclStore(components.db, components.committer)
    this.revocations = new RevocationPolicy(this.store, () => this.speaksFor())
    this.intake = new RevocationIntake(this.store, this.revocations, components.log, async (peer) => { await components.libp2p.hangUp(peerIdFromString(peer)) })
    const lookup = (id: string): LocalNode | undefined => components.nodes.get(id)
    this.sendCache = new DecisionCache<SendAllow>(lookup)
    this.receiveCache = new DecisionCache<true>(lookup)
    this.grants = new GrantExchange(components.libp2p, {
      learn: async (bundle, from) => await this.learn(bundle, from),
      bundleFor: (peer) => this.bundleFor(peer)
    }, components.log)
  }

  /** A local ancestor speaks for its descendants (as in the send and receive decisions). */
  private speaksFor (): SpeaksFor {
    return speaksForFrom((id) => {
      const node = this.c.nodes.get(id)
      if (node === undefined) return []
      try { return localAncestors(node.record) } catch { return [] }
    })
  }

  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    await this.store.load()
    await this.sweepRevocations()
    for (const node of this.c.nodes.list()) await this.applyConfiguredProfile(node)
    await this.grants.start()
  }

  /** Nothing to release: the grants protocol ends with libp2p. */
  stop (): void {
    this.started = false
  }

  /** Stored revocations that matter nowhere here (made-up tokens, stray signers) leave the store; they stay in memory, bounded. */
  private async sweepRevocations (): Promise<void> {
    let demoted = 0
    for (const rev of this.store.durableRevocations()) {
      const place = this.revocations.place(rev)
      if (place === 'durable') { this.revocations.noteStored(rev); continue }
      await this.store.demote(rev)
      demoted++
    }
    if (demoted > 0) this.c.log(`revocations: ${demoted} stored revocations apply to no chain here; dropped from the store`)
  }

  /** Hold (or record as issued) a chain, then store the pending revocations it makes relevant. */
  private async keepChain (chain: Uint8Array[], kind: 'hold' | 'issue'): Promise<ChainRecord> {
    const record = kind === 'hold' ? await this.store.hold(chain) : await this.store.issue(chain)
    for (const bytes of this.revocations.promotable(chain)) {
      const rev = await this.store.revoke(bytes)
      if (rev !== undefined) this.revocations.noteStored(rev)
    }
    return record
  }

  /** True when a valid revocation (by an issuer in the chain) applies to one of its links. */
  isChainRevoked (chain: readonly Uint8Array[]): boolean {
    return this.revocations.chainRevoked(chain)
  }

  private async learn (bundle: GrantBundle, from: string): Promise<void> {
    await this.intake.take(bundle.revocations, from)
    for (const chain of bundle.chains) {
      try {
        const aud = decodeToken(chain[chain.length - 1]).payload.aud
        if (this.c.nodes.get(aud) !== undefined) await this.keepChain(chain, 'hold')
      } catch (err) {
        this.c.log(`grant chain from ${from} rejected: ${errorMessage(err)}`)
      }
    }
  }

  private bundleFor (peer: string): GrantBundle {
    const chains = this.store.allIssued().filter((r) => this.c.directory.hostOf(r.aud) === peer).map((r) => r.chain)
    return { chains, revocations: this.store.allRevocations() }
  }

  /** Sender side: attaches proof to the packet, throws the denial with the grant command that would allow it. */
  async authorizeSend (packet: Packet, from: LocalNode, target: Target): Promise<void> {
    await this.checkDestinationOnSend(packet, from, target)
    this.decideSend(packet, from, target)
  }

  /** authorizeSend at once when no signal-destination rule applies (true: decided, proof attached); false: call authorizeSend. */
  authorizeSendNow (packet: Packet, from: LocalNode, target: Target): boolean {
    if (this.destinationApplies(packet)) return false
    this.decideSend(packet, from, target)
    return true
  }

  private decideSend (packet: Packet, from: LocalNode, target: Target): void {
    const decision = checkSend(this.c.nodes, this.store, packet, from, target, this.sendCache)
    if (decision.allow) return
    // a denied-attempt notice goes to a local target's inbox; an a2a node has no reader (and a remote one is told by its host)
    if (target.kind === 'local') this.denied(packet, { code: decision.code, reason: decision.reason })
    throw denialError(decision, packet, from, target)
  }

  /** The sender-side decision on a probe packet, without attaching, caching or noticing anything. */
  probeSend (packet: Packet, from: LocalNode, target: Target): ReturnType<typeof checkSend> {
    return checkSend(this.c.nodes, this.store, packet, from, target)
  }

  /**
   * The receiving host's admission of a packet from a remote host: the
   * target lives here (checked once, here), the sender node is served by
   * the remote host (channel binding, from the sender's signed card), and
   * the proof and this host's records allow it.
   */
  async admit (packet: Packet, remotePeer: string): Promise<Denial | null> {
    const target = this.c.nodes.get(packet.to)
    if (target === undefined) return notServedHere(packet)
    if (this.c.directory.hostOf(packet.from) === undefined) {
      const conn = this.c.libp2p.getConnections().find((c) => c.remotePeer.toString() === remotePeer)
      // a packet comes on a connection: without one the stream is gone (the receiver ends it)
      if (conn === undefined) throw new Error('not connected')
      await this.c.exchange.exchange(conn.remotePeer).catch(() => 0)
    }
    const unbound = this.unbound(packet, remotePeer)
    if (unbound !== null) return unbound
    const misdirected = await this.destinationOnReceive(packet, target)
    if (misdirected !== null) return misdirected
    return checkReceive(this.c.nodes, this.store, packet, target, this.c.directory.get(packet.from)?.name, this.receiveCache)
  }

  /**
   * admit at once where it decides without waiting (the sender's host known:
   * no card exchange; no signal-destination rule: no record to read); else
   * undefined, and admit decides. test/authz/admit-now.test.ts compares them.
   */
  admitNow (packet: Packet, remotePeer: string): Denial | null | undefined {
    const target = this.c.nodes.get(packet.to)
    if (target === undefined) return notServedHere(packet)
    if (this.c.directory.hostOf(packet.from) === undefined) return undefined
    const unbound = this.unbound(packet, remotePeer)
    if (unbound !== null || hasDestinationRule(this.destinations, packet)) return unbound ?? undefined
    return checkReceive(this.c.nodes, this.store, packet, target, this.c.directory.get(packet.from)?.name, this.receiveCache)
  }

  /** The channel binding: null when the sender node is served by the sending host (from its signed card). */
  private unbound (packet: Packet, remotePeer: string): Denial | null {
    if (this.c.directory.hostOf(packet.from) === remotePeer) return null
    return { code: 'CHANNEL_BINDING', reason: `node ${packet.from} is not served by the sending host ${remotePeer}` }
  }

  private get destinations (): DestinationPolicy {
    return this.c.policy.signalDestinations ?? DEFAULT_DESTINATIONS
  }

  private destinationApplies (packet: Packet): boolean { return hasDestinationRule(this.destinations, packet) && signalPayloadProblem(packet.signal, packet.payload) === undefined }

  /** Sender side of the signal-destination rule: SignalDestinationError names what the signal may not do. */
  private async checkDestinationOnSend (packet: Packet, from: LocalNode, target: Target): Promise<void> {
    if (!this.destinationApplies(packet)) return // (a payload that breaks its signal's rule is named by the encoder, SIGNAL_PAYLOAD, first)
    const answers = async (): Promise<boolean> => {
      const e = packet.in_reply_to === undefined ? undefined : await this.c.answers?.received(from.record.id, packet.in_reply_to)
      return e !== undefined && (e.from === packet.to || e.return_to === packet.to)
    }
    const toParent = target.kind === 'remote' ? target.card.parent ?? null : target.node.record.parent ?? null
    const problem = await destinationProblem(this.destinations, packet, { fromParent: from.record.parent ?? null, toParent, answers })
    if (problem !== undefined) throw new SignalDestinationError(`${SIGNAL_DESTINATION}: ${problem}`)
  }

  /** Receiving side: from the packet's verified lineage and this host's own records (what it sent), never the sender's word. */
  private async destinationOnReceive (packet: Packet, target: LocalNode): Promise<Denial | null> {
    if (!hasDestinationRule(this.destinations, packet)) return null
    const answers = async (): Promise<boolean> => {
      const s = packet.in_reply_to === undefined ? undefined : await this.c.answers?.sent(packet.in_reply_to)
      // the target sent it to the RETURN's sender, or a node of this host did (a SPAWN naming the target as return_to)
      return s !== undefined && s.to === packet.from && (s.from === packet.to || this.c.nodes.get(s.from) !== undefined)
    }
    const problem = await destinationProblem(this.destinations, packet, { fromParent: proofParent(packet), toParent: target.record.parent ?? null, answers })
    return problem === undefined ? null : { code: SIGNAL_DESTINATION, reason: problem }
  }

  /** The receive decision alone (proof and records; no channel binding), for a packet to a local node. */
  receiveDecision (packet: Packet): Denial | null {
    const target = this.c.nodes.get(packet.to)
    if (target === undefined) return notServedHere(packet)
    return checkReceive(this.c.nodes, this.store, packet, target, this.c.directory.get(packet.from)?.name, this.receiveCache)
  }

  /** A "denied attempt" notice in the target's inbox: sender, signal, time, reason — never the body; rate-limited. */
  denied (packet: Packet, denial: Denial): void {
    // host-level failures (a forged sender, a wrong host) are logged, not noticed to the node
    if (HOST_LEVEL.has(denial.code) || this.c.nodes.get(packet.to) === undefined) return
    const key = `${packet.to}|${packet.from}`
    const now = Date.now()
    const last = this.lastNotice.get(key) ?? 0
    if (now - last < this.c.policy.deniedNoticeWindow) return
    this.lastNotice.set(key, now)
    if (this.lastNotice.size > 10_000) this.lastNotice.clear()
    const who = `${this.c.label(packet.from)} (${packet.from})`
    void this.c.notices.notify(packet.to, `denied attempt: ${who} tried to send ${packet.signal} at ${new Date(packet.ts).toISOString()}: ${denial.code}: ${denial.reason}`)
  }

  /** A profile from config.yaml `profiles.<name>` (validated; a bad one fails the start with its name). */
  private async applyConfiguredProfile (node: LocalNode): Promise<LocalNode> {
    const configured = this.c.policy.profiles[node.record.name]
    if (configured === undefined) return node
    let profile: Profile
    try {
      profile = validateProfile(configured)
    } catch (err) {
      throw new ConfigError(`config: profiles.${node.record.name}: ${errorMessage(err)}`)
    }
    if (JSON.stringify(profile) === JSON.stringify(node.record.profile)) return node
    this.store.touch()
    await this.c.nodes.update({ ...node.record, profile: profile as Record<string, unknown> })
    this.store.touch()
    return this.c.nodes.get(node.record.id) ?? node
  }

  /** Create a node (under a local parent, which signs its lineage certificate); configured profiles apply. */
  async createChild (name: string, parentName?: string, a2a?: A2aEndpoint): Promise<LocalNode> {
    return await this.applyConfiguredProfile(await this.createNode(name, parentName, a2a))
  }

  /** `a2a`: the node is an external A2A agent (kind `a2a`, with its fetched card). */
  private async createNode (name: string, parentName?: string, a2a?: A2aEndpoint): Promise<LocalNode> {
    const kind = a2a === undefined ? 'external' : 'a2a'
    if (this.c.nodes.get(name) !== undefined) {
      throw new NameCollisionError(`node ${name} already exists on this host${parentName !== undefined ? '; re-parenting an existing node is refused' : ''}`)
    }
    if (parentName === undefined) return await this.c.nodes.create(name, kind, { a2a })
    const parent = this.c.nodes.get(parentName)
    if (parent === undefined) throw new UnknownNodeError(`no node named ${parentName} on this host to be the parent`)
    checkDepthPolicy(parent.record.depth, this.c.policy.maxDepth)
    const parentPath = lineagePathOf(parent.record)
    const parentCert: LineageCert | undefined = parentPath.length > 0 ? verifyLineage(parentPath[0]) : undefined
    this.store.touch()
    const { generateNodeKey } = await import('../identity/node-key.js')
    const key = generateNodeKey()
    const cert = encodeLineage(issueLineage(parent.key, key.id, parent.record.depth + 1, parentCert))
    return await this.c.nodes.create(name, kind, { a2a, key, parent: parent.record.id, depth: parent.record.depth + 1, lineage: encodeLineagePath([cert, ...parentPath]) })
  }

  private policy (req: GrantRequest): TokenPolicy {
    const pol: { signals?: Signal[], zones?: Zone[] } = {}
    if (req.signals !== undefined && req.signals.length > 0) pol.signals = req.signals
    if (req.zones !== undefined && req.zones.length > 0) pol.zones = req.zones
    return pol
  }

  /** Issue a grant (or delegate a held one, narrower) and hand it to the audience's host. */
  async grant (req: GrantRequest): Promise<ChainRecord & { handed: boolean, expires_clamped?: string }> {
    const issuer = this.c.nodes.get(req.as)
    if (issuer === undefined) throw new UnknownNodeError(`no node named ${req.as} on this host to issue the grant`)
    const audience = await this.c.resolver.resolve(req.to)
    const parentChain = req.delegate !== undefined ? this.store.findHeld(req.delegate) : undefined
    if (req.delegate !== undefined && (parentChain === undefined || parentChain.aud !== issuer.record.id)) {
      throw new InvalidArgumentError(`${req.as} holds no grant ${req.delegate} to delegate`)
    }
    const sub = parentChain?.sub ?? (req.sub !== undefined ? (await this.c.resolver.resolve(req.sub)).id : issuer.record.id)
    const asked = Date.now() + (req.expiresMs ?? DEFAULT_GRANT_LIFETIME)
    const exp = Math.min(asked, parentChain?.exp ?? Infinity)
    const token = issueToken(issuer.key, { aud: audience.id, sub, pol: this.policy(req), exp })
    if (parentChain !== undefined) {
      const parent = decodeToken(parentChain.chain[parentChain.chain.length - 1]).payload
      const wider = widening(parent, token.payload)
      if (wider !== undefined) throw new InvalidArgumentError(`delegation would widen the grant: ${wider}${narrowingHint(parent.pol, token.payload.pol)}`)
    }
    const chain = [...(parentChain?.chain ?? []), encodeToken(token)]
    const record = await this.keepChain(chain, 'issue')
    const handed = await this.hand(audience, chain)
    if (!handed) this.handLater(audience, chain)
    // a delegation cannot outlive the grant it delegates: say so rather than clamp silently
    return exp < asked && req.expiresMs !== undefined ? { ...record, handed, expires_clamped: `to ${new Date(exp).toISOString()}, the expiry of the delegated grant` } : { ...record, handed }
  }

  /** The audience's host was unreachable: try again with backoff (it also gets it on its next connect). */
  private handLater (audience: Target, chain: Uint8Array[], attempt = 1): void {
    if (attempt > HAND_RETRIES) return
    setTimeout(() => {
      void this.hand(audience, chain).then((ok) => { if (!ok) this.handLater(audience, chain, attempt + 1) }, () => this.handLater(audience, chain, attempt + 1))
    }, 1000 * 2 ** attempt).unref()
  }

  private async hand (audience: Target, chain: Uint8Array[]): Promise<boolean> {
    // the audience lives here (a local node, or an a2a node's record): the chain is held here
    if (audience.kind !== 'remote') { await this.keepChain(chain, 'hold'); return true }
    return await this.grants.pushTo(peerIdFromString(audience.host), { chains: [chain], revocations: [] })
  }

  async revoke (as: string, tokenId: string): Promise<{ token: string, revoker: string }> {
    const issuer = this.c.nodes.get(as)
    if (issuer === undefined) throw new UnknownNodeError(`no node named ${as} on this host`)
    if (!this.revocations.knows(tokenId)) throw new InvalidArgumentError(`unknown token ${tokenId} (not issued or held on this host)`)
    this.revocations.checkIssuer(issuer.record.id, as, tokenId)
    const bytes = encodeRevocation(issueRevocation(issuer.key, tokenId))
    await this.store.revoke(bytes)
    await this.grants.spreadRevocation(bytes)
    return { token: tokenId, revoker: issuer.record.id }
  }

  async block (as: string, sender: string, on: boolean): Promise<{ node: string, sender: string, blocked: boolean }> {
    const node = this.c.nodes.get(as)
    if (node === undefined) throw new UnknownNodeError(`no node named ${as} on this host`)
    const senderId = (await this.c.resolver.resolve(sender)).id
    await this.store.setBlock(node.record.id, senderId, on)
    return { node: node.record.id, sender: senderId, blocked: on }
  }

  async setProfile (as: string, profile: unknown): Promise<Profile> {
    const node = this.c.nodes.get(as)
    if (node === undefined) throw new UnknownNodeError(`no node named ${as} on this host`)
    const valid = validateProfile(profile)
    this.store.touch()
    await this.c.nodes.update({ ...node.record, profile: valid as Record<string, unknown> })
    this.store.touch()
    return valid
  }
}
