import { peerIdFromString } from '@libp2p/peer-id'
import { checkDepthPolicy, decodeToken, speaksForFrom, encodeLineage, encodeRevocation, encodeToken, issueLineage, issueRevocation, issueToken, validateProfile, verifyLineage, widening, type LineageCert, type Profile, type TokenPolicy } from '../acl/index.js'
import type { Denial } from '../delivery/receiver.js'
import type { Packet, Signal, Zone } from '../packet/types.js'
import type { LocalNode } from '../store/nodes.js'
import { ConfigError, InvalidArgumentError, NameCollisionError, UnknownNodeError, errorMessage } from '../util/errors.js'
import type { Host } from '../host/host.js'
import { resolveTarget, type Target } from '../host/resolve.js'
import { checkReceive, checkSend, denialError, type ReceiveCache, type SendAllow } from './acl-check.js'
import { DecisionCache } from './decision-cache.js'
import { AclStore, type ChainRecord } from './acl-store.js'
import { GrantExchange, type GrantBundle } from './grant-exchange.js'
import { encodeLineagePath, lineagePathOf, localAncestors } from './lineage-path.js'
import { RevocationIntake } from './revocation-intake.js'
import { RevocationPolicy, type SpeaksFor } from './revocation-policy.js'

export interface GrantRequest { as: string, to: string, sub?: string, signals?: Signal[], zones?: Zone[], expiresMs?: number, delegate?: string }

const HOST_LEVEL = new Set(['CHANNEL_BINDING', 'NOT_SERVED_HERE'])
const HAND_RETRIES = 5
const DEFAULT_GRANT_LIFETIME = 30 * 24 * 3600 * 1000

/** Lineage, grants, revocations, blocks and profiles of one host, wired into its send and receive paths. */
export class AclService {
  readonly store: AclStore
  private exchange!: GrantExchange
  private readonly lastNotice = new Map<string, number>()
  /** allow decisions memoised per (from, to, signal, zone[, sender name]) and proof; see decision-cache.ts */
  readonly sendCache: DecisionCache<SendAllow>
  readonly receiveCache: ReceiveCache
  /** who may revoke, which revocations are kept (revocation-policy.ts) */
  readonly revocations: RevocationPolicy
  private readonly intake: RevocationIntake

  constructor (private readonly host: Host) {
    this.store = new AclStore(host.db, host.committer)
    this.revocations = new RevocationPolicy(this.store, () => this.speaksFor())
    this.intake = new RevocationIntake(this.store, this.revocations, host.log, async (peer) => { await host.libp2p.hangUp(peerIdFromString(peer)) })
    const lookup = (id: string): LocalNode | undefined => host.nodes.get(id)
    this.sendCache = new DecisionCache<SendAllow>(lookup)
    this.receiveCache = new DecisionCache<true>(lookup)
  }

  /** A local ancestor speaks for its descendants (as in the send and receive decisions). */
  private speaksFor (): SpeaksFor {
    return speaksForFrom((id) => {
      const node = this.host.nodes.get(id)
      if (node === undefined) return []
      try { return localAncestors(node.record) } catch { return [] }
    })
  }

  async start (): Promise<void> {
    await this.store.load()
    await this.sweepRevocations()
    for (const node of this.host.nodes.list()) await this.applyConfiguredProfile(node)
    this.exchange = new GrantExchange(this.host.libp2p, {
      learn: async (bundle, from) => await this.learn(bundle, from),
      bundleFor: (peer) => this.bundleFor(peer)
    }, this.host.log)
    await this.exchange.start()
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
    if (demoted > 0) this.host.log(`revocations: ${demoted} stored revocations apply to no chain here; dropped from the store`)
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
        if (this.host.nodes.get(aud) !== undefined) await this.keepChain(chain, 'hold')
      } catch (err) {
        this.host.log(`grant chain from ${from} rejected: ${errorMessage(err)}`)
      }
    }
  }

  private bundleFor (peer: string): GrantBundle {
    const chains = this.store.allIssued().filter((r) => this.host.directory.hostOf(r.aud) === peer).map((r) => r.chain)
    return { chains, revocations: this.store.allRevocations() }
  }

  /** Sender side: attaches proof to the packet, throws the denial with the grant command that would allow it. */
  async authorizeSend (packet: Packet, from: LocalNode, target: Target): Promise<void> {
    const decision = checkSend(this.host, this.store, packet, from, target, this.sendCache)
    if (decision.allow) return
    if (target.kind === 'local') this.deniedNotice(packet, { code: decision.code, reason: decision.reason })
    throw denialError(decision, from.record.name, target.name, packet.signal)
  }

  admit (packet: Packet): Denial | null {
    return checkReceive(this.host, this.store, packet, this.host.directory.get(packet.from)?.name, this.receiveCache)
  }

  /** A "denied attempt" notice in the target's inbox: sender, signal, time, reason — never the body; rate-limited. */
  deniedNotice (packet: Packet, denial: Denial): void {
    // host-level failures (a forged sender, a wrong host) are logged, not noticed to the node
    if (this.host.nodes.get(packet.to) === undefined || HOST_LEVEL.has(denial.code)) return
    const key = `${packet.to}|${packet.from}`
    const now = Date.now()
    const last = this.lastNotice.get(key) ?? 0
    if (now - last < this.host.config.deniedNoticeWindow) return
    this.lastNotice.set(key, now)
    if (this.lastNotice.size > 10_000) this.lastNotice.clear()
    const who = `${this.host.label(packet.from)} (${packet.from})`
    void this.host.delivery.notice(packet.to, `denied attempt: ${who} tried to send ${packet.signal} at ${new Date(packet.ts).toISOString()}: ${denial.code}: ${denial.reason}`)
  }

  /** A profile from config.yaml `profiles.<name>` (validated; a bad one fails the start with its name). */
  private async applyConfiguredProfile (node: LocalNode): Promise<LocalNode> {
    const configured = this.host.config.profiles[node.record.name]
    if (configured === undefined) return node
    let profile: Profile
    try {
      profile = validateProfile(configured)
    } catch (err) {
      throw new ConfigError(`config: profiles.${node.record.name}: ${errorMessage(err)}`)
    }
    if (JSON.stringify(profile) === JSON.stringify(node.record.profile)) return node
    this.store.touch()
    await this.host.nodes.update({ ...node.record, profile: profile as Record<string, unknown> })
    this.store.touch()
    return this.host.nodes.get(node.record.id) ?? node
  }

  /** Create a node (under a local parent, which signs its lineage certificate); configured profiles apply. */
  async createChild (name: string, parentName?: string): Promise<LocalNode> {
    return await this.applyConfiguredProfile(await this.createNode(name, parentName))
  }

  private async createNode (name: string, parentName?: string): Promise<LocalNode> {
    if (this.host.nodes.get(name) !== undefined) {
      throw new NameCollisionError(`node ${name} already exists on this host${parentName !== undefined ? '; re-parenting an existing node is refused' : ''}`)
    }
    if (parentName === undefined) return await this.host.nodes.create(name, 'external')
    const parent = this.host.nodes.get(parentName)
    if (parent === undefined) throw new UnknownNodeError(`no node named ${parentName} on this host to be the parent`)
    checkDepthPolicy(parent.record.depth, this.host.config.maxDepth)
    const parentPath = lineagePathOf(parent.record)
    const parentCert: LineageCert | undefined = parentPath.length > 0 ? verifyLineage(parentPath[0]) : undefined
    this.store.touch()
    const { generateNodeKey } = await import('../identity/node-key.js')
    const key = generateNodeKey()
    const cert = encodeLineage(issueLineage(parent.key, key.id, parent.record.depth + 1, parentCert))
    return await this.host.nodes.create(name, 'external', { key, parent: parent.record.id, depth: parent.record.depth + 1, lineage: encodeLineagePath([cert, ...parentPath]) })
  }

  private policy (req: GrantRequest): TokenPolicy {
    const pol: { signals?: Signal[], zones?: Zone[] } = {}
    if (req.signals !== undefined && req.signals.length > 0) pol.signals = req.signals
    if (req.zones !== undefined && req.zones.length > 0) pol.zones = req.zones
    return pol
  }

  /** Issue a grant (or delegate a held one, narrower) and hand it to the audience's host. */
  async grant (req: GrantRequest): Promise<ChainRecord & { handed: boolean }> {
    const issuer = this.host.nodes.get(req.as)
    if (issuer === undefined) throw new UnknownNodeError(`no node named ${req.as} on this host to issue the grant`)
    const audience = await resolveTarget(this.host, req.to)
    const parentChain = req.delegate !== undefined ? this.store.findHeld(req.delegate) : undefined
    if (req.delegate !== undefined && (parentChain === undefined || parentChain.aud !== issuer.record.id)) {
      throw new InvalidArgumentError(`${req.as} holds no grant ${req.delegate} to delegate`)
    }
    const sub = parentChain?.sub ?? (req.sub !== undefined ? (await resolveTarget(this.host, req.sub)).id : issuer.record.id)
    const exp = Math.min(Date.now() + (req.expiresMs ?? DEFAULT_GRANT_LIFETIME), parentChain?.exp ?? Infinity)
    const token = issueToken(issuer.key, { aud: audience.id, sub, pol: this.policy(req), exp })
    if (parentChain !== undefined) {
      const wider = widening(decodeToken(parentChain.chain[parentChain.chain.length - 1]).payload, token.payload)
      if (wider !== undefined) throw new InvalidArgumentError(`delegation would widen the grant: ${wider}`)
    }
    const chain = [...(parentChain?.chain ?? []), encodeToken(token)]
    const record = await this.keepChain(chain, 'issue')
    const handed = await this.hand(audience, chain)
    if (!handed) this.handLater(audience, chain)
    return { ...record, handed }
  }

  /** The audience's host was unreachable: try again with backoff (it also gets it on its next connect). */
  private handLater (audience: Target, chain: Uint8Array[], attempt = 1): void {
    if (attempt > HAND_RETRIES) return
    setTimeout(() => {
      void this.hand(audience, chain).then((ok) => { if (!ok) this.handLater(audience, chain, attempt + 1) }, () => this.handLater(audience, chain, attempt + 1))
    }, 1000 * 2 ** attempt).unref()
  }

  private async hand (audience: Target, chain: Uint8Array[]): Promise<boolean> {
    if (audience.kind === 'local') { await this.keepChain(chain, 'hold'); return true }
    return await this.exchange.pushTo(peerIdFromString(audience.host), { chains: [chain], revocations: [] })
  }

  async revoke (as: string, tokenId: string): Promise<{ token: string, revoker: string }> {
    const issuer = this.host.nodes.get(as)
    if (issuer === undefined) throw new UnknownNodeError(`no node named ${as} on this host`)
    if (!this.revocations.knows(tokenId)) throw new InvalidArgumentError(`unknown token ${tokenId} (not issued or held on this host)`)
    this.revocations.checkIssuer(issuer.record.id, as, tokenId)
    const bytes = encodeRevocation(issueRevocation(issuer.key, tokenId))
    await this.store.revoke(bytes)
    await this.exchange.spreadRevocation(bytes)
    return { token: tokenId, revoker: issuer.record.id }
  }

  async block (as: string, sender: string, on: boolean): Promise<{ node: string, sender: string, blocked: boolean }> {
    const node = this.host.nodes.get(as)
    if (node === undefined) throw new UnknownNodeError(`no node named ${as} on this host`)
    const senderId = (await resolveTarget(this.host, sender)).id
    await this.store.setBlock(node.record.id, senderId, on)
    return { node: node.record.id, sender: senderId, blocked: on }
  }

  async setProfile (as: string, profile: unknown): Promise<Profile> {
    const node = this.host.nodes.get(as)
    if (node === undefined) throw new UnknownNodeError(`no node named ${as} on this host`)
    const valid = validateProfile(profile)
    this.store.touch()
    await this.host.nodes.update({ ...node.record, profile: valid as Record<string, unknown> })
    this.store.touch()
    return valid
  }
}
