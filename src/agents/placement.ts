// Remote placement over /amesh/agents/1.0.0. The caller's host asks another
// host to run a managed node under a local parent:
//   caller → {op:'start', name, spec, parent, grants}   (grants: host grant chains the parent holds)
//   host   → {child}                                    (after channel binding + host grant + spec checks;
//                                                         the child key is made here)
//   caller → {lineage}                                  (the parent signs the child's certificate)
//   host   → {ok, id}                                   (certificate verified, node created and started)
// An existing managed node of that name and parent is started again instead
// ({child, existing: true}, no certificate needed). Stopping: {op:'stop',
// name, parent} → {ok}, allowed to the node's parent only. Errors: {error:{code, message}}.
import * as lp from 'it-length-prefixed'
import { pushable, type Pushable } from 'it-pushable'
import type { Libp2p, Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { checkDepthPolicy } from '../acl/index.js'
import type { HomePaths } from '../control/paths.js'
import type { CardExchange } from '../discovery/cards-protocol.js'
import type { Directory } from '../discovery/directory.js'
import { generateNodeKey, type NodeKey } from '../identity/node-key.js'
import type { LocalNode } from '../store/nodes.js'
import { AmeshError, errorCode, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { AgentsAcl } from './components.js'
import { AGENT_START_CMD, AGENTS_PROTOCOL, PLACEMENT_MAX_MESSAGE, PLACEMENT_TIMEOUT } from './constants.js'
import { PlacementError } from './errors.js'
import { checkHostGrant, presentable } from './host-grant.js'
import { checkChildLineage, signChild, type ChildLineage } from './lineage.js'
import { parseSpecObject, type AgentSpec } from './spec.js'
import { agentDir, type AgentRecord } from './state.js'
import { ON_LIMITED, openStream } from '../util/streams.js'

type Msg = Record<string, unknown>
const enc = new TextEncoder()
const dec = new TextDecoder()

/** Length-prefixed JSON messages over one stream, each read under the placement timeout. */
class Channel {
  private readonly out: Pushable<Uint8Array> = pushable()
  private readonly reader: AsyncIterator<{ subarray: () => Uint8Array }>

  constructor (private readonly stream: Stream) {
    void stream.sink(lp.encode(this.out)).catch(() => {})
    this.reader = lp.decode(stream.source, { maxDataLength: PLACEMENT_MAX_MESSAGE })[Symbol.asyncIterator]()
  }

  send (msg: Msg): void { this.out.push(enc.encode(JSON.stringify(msg))) }

  async recv (): Promise<Msg> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new PlacementError('placement: no answer in time')), PLACEMENT_TIMEOUT) })
    try {
      const next = await Promise.race([this.reader.next(), timeout])
      if (next.done === true) throw new PlacementError('placement: the other host closed the stream')
      const v: unknown = JSON.parse(dec.decode(next.value.subarray()))
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new PlacementError('placement: malformed message')
      const msg = v as Msg
      const err = msg.error as { code?: unknown, message?: unknown } | undefined
      if (err !== undefined) throw new AmeshError(typeof err.code === 'string' ? err.code : 'PLACEMENT_FAILED', String(err.message))
      return msg
    } finally {
      clearTimeout(timer)
    }
  }

  close (): void {
    this.out.end()
    setTimeout(() => { void this.stream.close().catch(() => {}) }, 100).unref()
  }
}

function text (msg: Msg, key: string): string {
  const v = msg[key]
  if (typeof v !== 'string' || v === '' || v.length > 4096) throw new PlacementError(`placement: ${key} missing`)
  return v
}

function chainsOf (msg: Msg): Uint8Array[][] {
  const v = msg.grants
  if (!Array.isArray(v)) return []
  return v.slice(0, 32).filter((c): c is string[] => Array.isArray(c) && c.every((b) => typeof b === 'string'))
    .map((c) => c.slice(0, 16).map((b) => new Uint8Array(Buffer.from(b, 'base64'))))
}

/** What placement uses of its host. */
export interface PlacementComponents {
  libp2p: Pick<Libp2p, 'handle' | 'unhandle' | 'dialProtocol' | 'getConnections' | 'peerId'>
  /** which host serves a node (channel binding of the asking parent) */
  directory: Pick<Directory, 'hostOf'>
  /** card exchange with the other host after a placement */
  exchange: Pick<CardExchange, 'exchange'>
  acl: { store: Pick<AgentsAcl['store'], 'allHeld' | 'revocationsOf'> }
  /** a node id's name, when this host knows it */
  label: (nodeId: string) => string
  paths: Pick<HomePaths, 'agents'>
  /** policy.max_depth */
  maxDepth: number
  log: Logger
}

/** What placement asks of this host's managed nodes when it serves a request (the manager). */
export interface LocalAgents {
  /** the host-level issuer whose grants allow placement here */
  readonly issuer: Pick<NodeKey, 'id'>
  existing: (spec: AgentSpec, parentId: string | undefined) => Promise<LocalNode | undefined>
  create: (spec: AgentSpec, key: NodeKey, parentId: string | undefined, lineage: ChildLineage | undefined) => Promise<LocalNode>
  launch: (node: LocalNode, spec: AgentSpec, rec: AgentRecord) => Promise<void>
  parentOf: (name: string) => string | undefined
  stop: (name: string) => Promise<unknown>
}

export class Placement {
  private started = false

  constructor (private readonly components: PlacementComponents, private readonly manager: LocalAgents) {}

  private get libp2p (): PlacementComponents['libp2p'] { return this.components.libp2p }

  /** Serve placement requests; a second call does nothing. */
  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    await this.libp2p.handle(AGENTS_PROTOCOL, ({ stream, connection }) => { void this.serve(stream, connection.remotePeer.toString()) }, { maxInboundStreams: 32, maxOutboundStreams: 32, ...ON_LIMITED })
  }

  /** Stop serving placement requests; a second call does nothing. */
  async stop (): Promise<void> {
    if (!this.started) return
    this.started = false
    await this.libp2p.unhandle(AGENTS_PROTOCOL).catch(() => {})
  }

  private async open (peer: string): Promise<Channel> {
    try {
      const stream = await openStream(this.libp2p, peerIdFromString(peer), AGENTS_PROTOCOL, { signal: AbortSignal.timeout(PLACEMENT_TIMEOUT) })
      return new Channel(stream)
    } catch (err) {
      throw new PlacementError(`cannot reach host ${peer} for placement: ${errorMessage(err)}`, { cause: err })
    }
  }

  /** Caller side: ask `peer` to run the node; the parent signs its certificate. Returns the node id. */
  async place (peer: string, name: string, spec: Msg, parent: LocalNode): Promise<string> {
    checkDepthPolicy(parent.record.depth, this.components.maxDepth)
    const grants = presentable(this.components.acl.store, parent.record.id, AGENT_START_CMD).map((c) => c.map((b) => Buffer.from(b).toString('base64')))
    const ch = await this.open(peer)
    try {
      ch.send({ op: 'start', name, spec, parent: parent.record.id, grants })
      const first = await ch.recv()
      const child = text(first, 'child')
      if (first.existing !== true) {
        ch.send({ lineage: signChild(parent, child, this.components.maxDepth).lineage })
        await ch.recv()
      }
      await this.components.exchange.exchange(peerIdFromString(peer)).catch(() => 0)
      return child
    } finally {
      ch.close()
    }
  }

  async stopRemote (peer: string, name: string, parentId: string): Promise<void> {
    const ch = await this.open(peer)
    try {
      ch.send({ op: 'stop', name, parent: parentId })
      await ch.recv()
      await this.components.exchange.exchange(peerIdFromString(peer)).catch(() => 0)
    } finally {
      ch.close()
    }
  }

  private async serve (stream: Stream, remotePeer: string): Promise<void> {
    const ch = new Channel(stream)
    try {
      const req = await ch.recv()
      const parent = text(req, 'parent')
      await this.checkBinding(parent, remotePeer)
      if (req.op === 'stop') await this.serveStop(ch, text(req, 'name'), parent)
      else if (req.op === 'start') await this.serveStart(ch, req, parent)
      else throw new PlacementError(`placement: unknown op ${String(req.op)}`)
    } catch (err) {
      this.components.log(`placement from ${remotePeer}: ${errorMessage(err)}`)
      ch.send({ error: { code: errorCode(err), message: errorMessage(err) } })
    } finally {
      ch.close()
    }
  }

  /** The requesting parent must be served by the host that asks (its signed card says so). */
  private async checkBinding (parent: string, remotePeer: string): Promise<void> {
    const { directory, exchange } = this.components
    if (directory.hostOf(parent) !== remotePeer) await exchange.exchange(peerIdFromString(remotePeer)).catch(() => 0)
    if (directory.hostOf(parent) !== remotePeer) {
      throw new PlacementError(`placement: node ${parent} is not served by the asking host ${remotePeer}`)
    }
  }

  private async serveStart (ch: Channel, req: Msg, parentId: string): Promise<void> {
    const parentName = this.components.label(parentId)
    checkHostGrant(this.components, this.manager.issuer.id, chainsOf(req), parentId, parentName, AGENT_START_CMD)
    const name = text(req, 'name')
    const spec = parseSpecObject(req.spec, agentDir(this.components.paths.agents, name), name)
    const base = agentDir(this.components.paths.agents, name)
    const rec = { name, nodeId: '', desired: 'running' as const, raw: req.spec as Msg, base }
    const existing = await this.manager.existing(spec, parentId)
    if (existing !== undefined) {
      ch.send({ child: existing.record.id, existing: true })
      await this.manager.launch(existing, spec, { ...rec, nodeId: existing.record.id })
      return
    }
    const key = generateNodeKey()
    ch.send({ child: key.id })
    const lineage = checkChildLineage(text(await ch.recv(), 'lineage'), key.id, parentId, this.components.maxDepth)
    const node = await this.manager.create(spec, key, parentId, lineage)
    await this.manager.launch(node, spec, { ...rec, nodeId: node.record.id })
    ch.send({ ok: true, id: node.record.id })
  }

  private async serveStop (ch: Channel, name: string, parentId: string): Promise<void> {
    if (this.manager.parentOf(name) !== parentId) throw new PlacementError(`placement: only the parent of ${name} may stop it`)
    await this.manager.stop(name)
    ch.send({ ok: true })
  }
}
