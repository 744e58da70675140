// Managed nodes of one host: start from a spec (here or, with a host grant,
// on another host), supervise, stop, list, and bring back after a restart.
import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Libp2p } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import type { HomePaths } from '../control/paths.js'
import { generateNodeKey, type NodeKey } from '../identity/node-key.js'
import type { LocalNode, NodeCardFields, NodeStore } from '../store/nodes.js'
import { InvalidArgumentError, NameCollisionError, UnknownNodeError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { WITHDRAW_GRACE } from './constants.js'
import { compileAllow, type CommsComponents } from './comms.js'
import { NotManagedError, UnknownAgentError } from './errors.js'
import { loadOrCreateIssuer } from './host-grant.js'
import { signChild, type ChildLineage } from './lineage.js'
import { RotatingLog } from './logs.js'
import { loadSpecFile, parseSpecObject, type AgentSpec } from './spec.js'
import { agentDir, loadRecords, saveRecord, type AgentRecord } from './state.js'
import { Supervisor, killGroup } from './supervisor.js'
import { acpStatus, bridgeSpec } from './acp-runtime.js'

const BIN = fileURLToPath(new URL('../../../bin/amesh', import.meta.url))

export interface StartRequest {
  /** absolute path of the spec file */
  path: string
  /** overrides the spec's name */
  name?: string
  /** a local node; absent: a root node */
  parent?: string
}

export interface AgentView {
  name: string
  id: string
  kind: 'managed'
  parent: string | null
  parent_id: string | null
  state: string
  pid: number | null
  restarts: number
  uptime_ms: number
  host: string
  last_exit?: string
  /** runtime acp: agent name/version, sessions, state (from the bridge) */
  acp?: Record<string, unknown>
}

export interface Placed { name: string, id: string, host: string, parent: string | null, state: string }

/** The signed cards of this host's nodes, as far as managed nodes change them. */
export interface ManagedCards {
  /** a stopped node's card: short-lived from now on */
  withdraw: (node: LocalNode, grace: number) => void
  /** a started node's card is a normal one again */
  restore: (nodeId: string) => void
  /** re-sign the card (the spec changed) */
  invalidate: (nodeId: string) => void
}

/** What the manager uses of its host (comms grants included). */
export interface ManagerComponents extends CommsComponents {
  libp2p: Pick<Libp2p, 'peerId'>
  nodes: Pick<NodeStore, 'get' | 'create' | 'update'>
  cards: ManagedCards
  /** a node id's name, when this host knows it */
  label: (nodeId: string) => string
  /** tell other hosts (card exchange, DHT, gossip) that a local node appeared or changed */
  announce: () => void
  paths: Pick<HomePaths, 'home' | 'agents'>
  /** policy.max_depth */
  maxDepth: number
  log: Logger
}

/** Placing and stopping managed nodes on other hosts (the placement protocol's caller side). */
export interface RemotePlacement {
  /** ask `peer` to run the node under `parent`; returns the node id */
  place: (peer: string, name: string, spec: Record<string, unknown>, parent: LocalNode) => Promise<string>
  stopRemote: (peer: string, name: string, parentId: string) => Promise<void>
}

function cardFields (spec: AgentSpec): NodeCardFields {
  const card: NodeCardFields = {}
  if (spec.description !== undefined) card.description = spec.description
  if (spec.skills !== undefined) card.skills = spec.skills
  return card
}

function isPeerId (v: string): boolean {
  try { peerIdFromString(v); return true } catch { return false }
}

export class AgentManager {
  readonly issuer: NodeKey
  private readonly supervisors = new Map<string, Supervisor>()
  private readonly records = new Map<string, AgentRecord>()

  constructor (private readonly components: ManagerComponents, private readonly placement: RemotePlacement) {
    this.issuer = loadOrCreateIssuer(components.paths.agents)
  }

  private get self (): string { return this.components.libp2p.peerId.toString() }

  /** Load desired state: start what should run, keep stopped nodes' cards withdrawn. */
  async restore (): Promise<void> {
    for (const rec of loadRecords(this.components.paths.agents, (name, err) => this.components.log(`agents: state of ${name} unreadable: ${errorMessage(err)}`))) {
      this.records.set(rec.name, rec)
      const node = this.components.nodes.get(rec.nodeId)
      if (rec.remote !== undefined || node === undefined) continue
      this.clearLeftover(rec)
      if (rec.desired !== 'running') { this.components.cards.withdraw(node, WITHDRAW_GRACE); continue }
      try {
        await this.launch(node, parseSpecObject(rec.raw, rec.base, rec.name), rec)
      } catch (err) {
        this.components.log(`agents: could not bring back ${rec.name}: ${errorMessage(err)}`)
      }
    }
  }

  /** A process left by a daemon that crashed: ended when it is still this node's. */
  private clearLeftover (rec: AgentRecord): void {
    if (rec.pid === undefined) return
    try {
      const environ = readFileSync(`/proc/${rec.pid}/environ`, 'utf8')
      if (environ.split('\0').includes(`AMESH_NODE_ID=${rec.nodeId}`)) killGroup(rec.pid, 'SIGKILL')
    } catch { /* gone, or not ours to judge */ }
  }

  /** `agent start`: validate the spec first (nothing starts when it is invalid), then place it. */
  async start (req: StartRequest): Promise<AgentView | Placed> {
    const { raw, spec, base } = loadSpecFile(req.path, req.name)
    const parent = this.parentNode(req.parent)
    if (spec.host !== undefined && spec.host !== this.self) {
      const peer = await this.hostOf(spec.host)
      if (peer !== this.self) return await this.startRemote(peer, spec, raw, base, parent)
    }
    const node = await this.managedNode(spec, parent)
    await this.launch(node, spec, { name: spec.name, nodeId: node.record.id, desired: 'running', raw, base })
    return this.view(spec.name)
  }

  private parentNode (name: string | undefined): LocalNode | undefined {
    if (name === undefined) return undefined
    const parent = this.components.nodes.get(name)
    if (parent === undefined) throw new UnknownNodeError(`no node named ${name} on this host to be the parent (create it with: amesh node add ${name})`)
    return parent
  }

  /** `host:` names a peer id, or a node whose serving host is meant. */
  private async hostOf (target: string): Promise<string> {
    if (isPeerId(target)) return target
    const t = await this.components.resolve(target)
    return t.kind === 'remote' ? t.host : this.self
  }

  private async startRemote (peer: string, spec: AgentSpec, raw: Record<string, unknown>, base: string, parent: LocalNode | undefined): Promise<Placed> {
    if (parent === undefined) throw new InvalidArgumentError('remote placement needs a parent node (--parent NODE, or run inside a node with AMESH_NODE set)')
    this.refuseTaken(spec.name)
    const { host: _drop, ...rest } = raw
    const id = await this.placement.place(peer, spec.name, rest, parent)
    const rec: AgentRecord = { name: spec.name, nodeId: id, desired: 'running', raw, base, remote: { host: peer }, parent: parent.record.id }
    this.records.set(rec.name, rec)
    saveRecord(this.components.paths.agents, rec)
    return { name: spec.name, id, host: peer, parent: parent.record.name, state: 'remote' }
  }

  private refuseTaken (name: string): void {
    const rec = this.records.get(name)
    if (rec?.remote !== undefined && rec.desired === 'running') throw new NameCollisionError(`${name} already runs on host ${rec.remote.host}; stop it first`)
    if (this.supervisors.get(name)?.state === 'running') throw new NameCollisionError(`${name} is already running; stop it first`)
  }

  /** The node for a spec run here: an existing managed node of that name, or a new one the parent signs for. */
  private async managedNode (spec: AgentSpec, parent: LocalNode | undefined): Promise<LocalNode> {
    const existing = await this.existing(spec, parent?.record.id)
    if (existing !== undefined) return existing
    const key = generateNodeKey()
    const lineage = parent !== undefined ? signChild(parent, key.id, this.components.maxDepth) : undefined
    return await this.create(spec, key, parent?.record.id, lineage)
  }

  /** An existing managed node of the spec's name, checked and updated from the spec; undefined when there is none. */
  async existing (spec: AgentSpec, parentId: string | undefined): Promise<LocalNode | undefined> {
    this.refuseTaken(spec.name)
    const node = this.components.nodes.get(spec.name)
    return node === undefined ? undefined : await this.reuse(node, spec, parentId)
  }

  async create (spec: AgentSpec, key: NodeKey, parentId: string | undefined, lineage: ChildLineage | undefined): Promise<LocalNode> {
    return await this.components.nodes.create(spec.name, 'managed', {
      key,
      parent: parentId,
      depth: lineage?.depth ?? 0,
      lineage: lineage?.lineage,
      profile: spec.profile,
      card: cardFields(spec)
    })
  }

  /** Start an existing managed node again, with this spec (same id, same inbox). */
  private async reuse (node: LocalNode, spec: AgentSpec, parentId: string | undefined): Promise<LocalNode> {
    if (node.record.kind !== 'managed') throw new NotManagedError(`node ${spec.name} is an external node: amesh does not start or stop it (pick another name)`)
    if (parentId !== undefined && parentId !== node.record.parent) {
      throw new NameCollisionError(`managed node ${spec.name} has parent ${this.components.label(node.record.parent ?? 'none')}; re-parenting an existing node is refused`)
    }
    const record = { ...node.record, card: cardFields(spec) }
    if (spec.profile !== undefined) record.profile = spec.profile
    else delete record.profile
    await this.components.nodes.update(record)
    this.components.cards.invalidate(node.record.id)
    return this.components.nodes.get(node.record.id) ?? node
  }

  /** Issue comms grants, record the desired state, start the process, announce the card. */
  async launch (node: LocalNode, spec: AgentSpec, rec: AgentRecord): Promise<void> {
    const dir = agentDir(this.components.paths.agents, spec.name)
    const log = new RotatingLog(dir)
    for (const line of await compileAllow(this.components, node, spec.allow)) log.note(line)
    const record: AgentRecord = { ...rec, desired: 'running' }
    delete record.remote
    this.records.set(spec.name, record)
    saveRecord(this.components.paths.agents, record)
    const run = bridgeSpec(spec, BIN, dir)
    const sup = new Supervisor({ spec: run, env: this.envFor(node, run), log, onPid: (pid) => this.rememberPid(spec.name, pid) })
    this.supervisors.set(spec.name, sup)
    this.components.cards.restore(node.record.id)
    sup.start()
    this.components.announce()
  }

  private envFor (node: LocalNode, spec: AgentSpec): NodeJS.ProcessEnv {
    const path = [dirname(BIN), dirname(process.execPath), process.env.PATH ?? ''].join(':')
    const env: NodeJS.ProcessEnv = { ...process.env, ...spec.env, AMESH_HOME: this.components.paths.home, AMESH_NODE: node.record.name, AMESH_NODE_ID: node.record.id, AMESH_BIN: BIN, PATH: path }
    if (spec.heartbeatMs !== undefined) env.AMESH_HEARTBEAT_MS = String(spec.heartbeatMs)
    else delete env.AMESH_HEARTBEAT_MS
    return env
  }

  private rememberPid (name: string, pid: number | undefined): void {
    const rec = this.records.get(name)
    if (rec === undefined || rec.pid === pid) return
    rec.pid = pid
    try { saveRecord(this.components.paths.agents, rec) } catch (err) { this.components.log(`agents: saving ${name}: ${errorMessage(err)}`) }
  }

  /** `agent stop`: the process ends, the card is withdrawn, the node (and its inbox) stays. */
  async stop (name: string): Promise<AgentView | Placed> {
    const rec = this.records.get(name)
    if (rec === undefined) throw new UnknownAgentError(`no managed node named ${name} on this host`)
    if (rec.remote !== undefined) {
      if (rec.parent === undefined) throw new InvalidArgumentError(`${name} runs on host ${rec.remote.host}; stop it there`)
      await this.placement.stopRemote(rec.remote.host, name, rec.parent)
      rec.desired = 'stopped'
      saveRecord(this.components.paths.agents, rec)
      return { name, id: rec.nodeId, host: rec.remote.host, parent: this.components.label(rec.parent), state: 'stopped' }
    }
    rec.desired = 'stopped'
    saveRecord(this.components.paths.agents, rec)
    await this.supervisors.get(name)?.stop()
    const node = this.components.nodes.get(rec.nodeId)
    if (node !== undefined) this.components.cards.withdraw(node, WITHDRAW_GRACE)
    this.components.announce()
    return this.view(name)
  }

  /** The parent that may stop a node placed here from another host. */
  parentOf (name: string): string | undefined {
    const rec = this.records.get(name)
    return rec === undefined || rec.remote !== undefined ? undefined : this.components.nodes.get(rec.nodeId)?.record.parent
  }

  beat (name: string): { name: string, state: string } {
    const sup = this.supervisors.get(name)
    if (sup === undefined) throw new UnknownAgentError(`no managed node named ${name} runs on this host`)
    sup.beat()
    return { name, state: sup.state }
  }

  view (name: string): AgentView {
    const rec = this.records.get(name)
    if (rec === undefined) throw new UnknownAgentError(`no managed node named ${name} on this host`)
    const sup = this.supervisors.get(name)
    const node = this.components.nodes.get(rec.nodeId)
    const parentId = rec.parent ?? node?.record.parent ?? null
    const v: AgentView = {
      name,
      id: rec.nodeId,
      kind: 'managed',
      parent: parentId === null ? null : this.components.label(parentId),
      parent_id: parentId,
      state: rec.remote !== undefined ? (rec.desired === 'running' ? 'remote' : 'stopped') : (sup?.state ?? 'stopped'),
      pid: sup?.pid ?? null,
      restarts: sup?.restarts ?? 0,
      uptime_ms: sup?.state === 'running' && sup.startedAt !== undefined ? Date.now() - sup.startedAt : 0,
      host: rec.remote?.host ?? this.self
    }
    if (sup?.lastExit !== undefined) v.last_exit = sup.lastExit
    if (rec.raw.runtime === 'acp' && rec.remote === undefined) {
      const status = acpStatus(agentDir(this.components.paths.agents, name)) ?? {}
      // the bridge's last word stands only while it runs
      v.acp = sup?.state === 'running' ? { state: 'starting', ...status } : { ...status, state: 'down', agent_pid: null }
    }
    return v
  }

  list (): AgentView[] {
    return [...this.records.keys()].sort().map((n) => this.view(n))
  }

  /** Daemon shutdown: processes end, desired state is kept (they come back with the daemon). */
  async shutdown (): Promise<void> {
    await Promise.all([...this.supervisors.values()].map(async (s) => await s.stop()))
  }
}
