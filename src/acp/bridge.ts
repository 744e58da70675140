// `amesh acp-bridge`: the face that makes an ACP agent a managed node. It is
// the supervised process of a `runtime: acp` spec: it starts the agent over
// stdio, follows the node's inbox through the control socket, and maps
// packets to ACP and back (docs/ACP.md). A packet is acked only once handled.
import { existsSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { permissionRequestId } from '../control/permission.js'
import { dirname, isAbsolute, join, resolve, sep } from 'node:path'
import { methods, type McpServer, type RequestPermissionRequest, type SessionNotification } from '@agentclientprotocol/sdk'
import { ACP_STATUS_FILE } from '../control/agent-files.js'
import { ControlClient } from '../control/client.js'
import { homePaths } from '../control/paths.js'
import type { RenderedPacket } from '../packet/render.js'
import { errorMessage } from '../util/errors.js'
import { createLogger, type Logger } from '../util/log.js'
import { AgentProcess, acpError } from './agent-process.js'
import { bridgeConfig, type BridgeConfig } from './config.js'
import { CANCEL_CONTEXT } from './constants.js'
import { Sandbox } from './files.js'
import { AckTracker, Journal } from './journal.js'
import { Permissions } from './permissions.js'
import { wellFormedDeep } from '../util/unicode.js'
import { Turn, type SendParams } from './turn.js'

const VERSION = '0.1.0'

export interface BridgeOptions { home: string, node: string, bin: string }

function isCancel (p: RenderedPacket): boolean {
  const context = p.payload.context
  if (p.signal !== 'MESSAGE' || context === undefined) return false
  if (typeof context !== 'string') return JSON.stringify(context) === CANCEL_CONTEXT
  try { return JSON.stringify(JSON.parse(context)) === CANCEL_CONTEXT } catch { return false }
}

export class Bridge {
  private readonly journal: Journal
  private readonly acks = new AckTracker()
  private readonly turns = new Map<string, Turn>()
  private readonly live = new Set<string>()
  private readonly chains = new Map<string, Promise<unknown>>()
  private readonly permissions: Permissions
  private readonly log: Logger
  private agent?: AgentProcess
  private approver?: string
  private crashed = false

  constructor (private readonly opts: BridgeOptions, private readonly cfg: BridgeConfig, private readonly control: ControlClient) {
    this.journal = new Journal(cfg.dir)
    this.log = createLogger(`amesh:acp:${opts.node}`)
    this.permissions = new Permissions((l) => this.log(l))
  }

  async start (): Promise<AgentProcess> {
    this.agent = await AgentProcess.start(this.cfg, {
      update: (n) => this.onUpdate(n),
      permission: async (req) => await this.onPermission(req),
      sandbox: new Sandbox(this.cfg.cwd, this.cfg.fs)
    }, VERSION)
    const info = this.agent.info.agentInfo
    this.log(`acp agent ${info?.name ?? '?'} ${info?.version ?? '?'} (protocol ${this.agent.info.protocolVersion}) pid ${this.agent.pid ?? '?'}, load_session ${String(this.agent.canLoad)}`)
    this.status()
    return this.agent
  }

  private onUpdate (n: SessionNotification): void { this.turns.get(n.sessionId)?.update(n.update) }

  private async onPermission (req: RequestPermissionRequest): Promise<{ outcome: { outcome: 'cancelled' } | { outcome: 'selected', optionId: string } }> {
    const turn = this.turns.get(req.sessionId)
    if (turn === undefined) return { outcome: { outcome: 'cancelled' } }
    return await turn.permission(req)
  }

  /** Every send of the bridge: the agent's output, with any lone surrogate in it as U+FFFD (it would be refused, and the output lost) */
  private async send (p: SendParams): Promise<{ id: string }> {
    return await this.control.request<{ id: string }>('send', { as: this.opts.node, ...wellFormedDeep(p) })
  }

  private async approverId (requester: string): Promise<string> {
    if (this.cfg.approver === undefined) return requester
    this.approver ??= (await this.control.call('node.resolve', { target: this.cfg.approver })).id
    return this.approver
  }

  /** amesh's own MCP server for this node, tools only (the bridge consumes the inbox). */
  private mcpServers (): McpServer[] {
    if (!this.cfg.mcp) return []
    return [{ name: 'amesh', command: process.execPath, args: [this.opts.bin, 'mcp', '--name', this.opts.node, '--tools-only', '--home', this.opts.home], env: [] }]
  }

  /** The session of a conversation: the stored one (loaded when the agent can), else a new one. */
  private async sessionFor (conversation: string, cwd: string): Promise<string> {
    const agent = this.agent as AgentProcess
    const stored = this.journal.session(conversation)
    if (stored !== undefined && this.live.has(stored)) return stored
    if (stored !== undefined && agent.canLoad) {
      try {
        await agent.conn.agent.request(methods.agent.session.load, { sessionId: stored, cwd, mcpServers: this.mcpServers() })
        this.live.add(stored)
        return stored
      } catch (err) { this.log(`session/load ${stored} failed (${acpError(err)}): a new session`) }
    }
    let r: { sessionId: string }
    try {
      r = await agent.conn.agent.request(methods.agent.session.new, { cwd, mcpServers: this.mcpServers() })
    } catch (err) {
      this.log(`session/new failed: ${acpError(err)}`)
      throw err
    }
    this.log(`session/new ${r.sessionId} for conversation ${conversation} (cwd ${cwd})`)
    this.live.add(r.sessionId)
    this.journal.setSession(conversation, r.sessionId)
    return r.sessionId
  }

  /** cwd: the packet's scope.files root (a directory, or a file's directory) when it lies inside the spec's cwd, else the spec's cwd. */
  private cwdFor (p: RenderedPacket): string {
    const root = p.scope.files[0]
    if (root === undefined || !isAbsolute(root)) return this.cfg.cwd
    const dir = existsSync(root) && statSync(root).isDirectory() ? resolve(root) : dirname(resolve(root))
    return (dir === this.cfg.cwd || dir.startsWith(this.cfg.cwd + sep)) && existsSync(dir) ? dir : this.cfg.cwd
  }

  status (): void {
    const turns = [...this.turns.values()]
    const state = this.agent === undefined ? 'starting' : turns.some((t) => t.state === 'awaiting permission') ? 'awaiting permission' : turns.length > 0 ? 'prompting' : 'idle'
    const info = this.agent?.info.agentInfo
    const body = { agent: info?.name ?? null, version: info?.version ?? null, protocol: this.agent?.info.protocolVersion ?? null, agent_pid: this.agent?.pid ?? null, sessions: this.journal.sessionCount, live_sessions: this.live.size, state, prompts: turns.length, waiting_permissions: this.permissions.waiting }
    try {
      const file = join(this.cfg.dir, ACP_STATUS_FILE)
      writeFileSync(file + '.tmp', JSON.stringify(body) + '\n')
      renameSync(file + '.tmp', file)
    } catch (err) { this.log(`status not written: ${errorMessage(err)}`) }
  }

  private async ack (seq: number): Promise<void> {
    const cursor = this.acks.handled(seq)
    if (cursor === undefined) return
    await this.control.call('ack', { node: this.opts.node, seq: cursor })
    this.journal.acked(cursor)
  }

  /** One inbox packet. Verdicts and cancels are handled at once; prompts run per session, in order. */
  handle (p: RenderedPacket): void {
    this.acks.received(p.seq)
    if (this.journal.isDone(p.seq)) { void this.ack(p.seq); return }
    if (this.permissions.consume(p) || this.cancel(p) || !['SPAWN', 'MESSAGE'].includes(p.signal)) {
      if (!['SPAWN', 'MESSAGE'].includes(p.signal) && permissionRequestId(p.conversation_id) === undefined) this.log(`${p.signal} ${p.id} from ${p.from}: not a prompt, acked`)
      this.journal.finish(p.seq)
      void this.ack(p.seq).catch((err) => this.log(`ack ${p.seq}: ${errorMessage(err)}`))
      return
    }
    const conversation = typeof p.conversation_id === 'string' ? p.conversation_id : p.id
    const chain = (this.chains.get(conversation) ?? Promise.resolve()).then(async () => await this.prompt(p, conversation))
    this.chains.set(conversation, chain.catch(() => {}))
  }

  private cancel (p: RenderedPacket): boolean {
    if (!isCancel(p)) return false
    const turns = [...this.turns.values()].filter((t) => t.requester === p.from_id)
    const turn = turns.find((t) => t.packet.id === p.in_reply_to) ?? turns.find((t) => p.conversation_id !== undefined && t.packet.conversation_id === p.conversation_id) ?? turns[0]
    if (turn === undefined) { this.log(`cancel ${p.id} from ${p.from}: no prompt of theirs runs`); return true }
    this.log(`cancel ${p.id} from ${p.from}: session/cancel ${turn.sessionId}`)
    void turn.cancel().catch((err) => this.log(`session/cancel: ${errorMessage(err)}`))
    return true
  }

  private async prompt (p: RenderedPacket, conversation: string): Promise<void> {
    if (this.crashed) return // left unacked: the restarted bridge runs it
    const earlier = this.journal.inflight(p.seq)
    if (earlier !== undefined && (this.cfg.retry !== 'once' || earlier.attempts >= 2)) {
      await this.reportLost(p, earlier.attempts)
      return
    }
    const attempts = (earlier?.attempts ?? 0) + 1
    let turn: Turn | undefined
    try {
      const sessionId = await this.sessionFor(conversation, this.cwdFor(p))
      this.journal.begin(p.seq, { id: p.id, from: p.from_id, conversation, attempts })
      turn = this.turnFor(p, sessionId)
      this.turns.set(sessionId, turn)
      this.status()
      this.log(`prompt ${p.id} from ${p.from} (${p.signal}, session ${sessionId}, attempt ${attempts})`)
      const outcome = await turn.run()
      this.log(`stop ${p.id}: ${outcome.ok ? 'end_turn' : outcome.reason}`)
      if (!outcome.ok && outcome.crashed && this.cfg.retry === 'once' && attempts < 2) { this.crashed = true; return }
      await turn.report(outcome)
    } catch (err) {
      this.log(`prompt ${p.id} failed: ${acpError(err)}`)
      if (this.crashed || this.agent?.endReason !== undefined) return
      await (turn ?? this.turnFor(p, '')).report({ ok: false, reason: `agent error: ${acpError(err)}`, crashed: false })
    } finally {
      if (turn !== undefined) this.turns.delete(turn.sessionId)
      this.status()
    }
    this.journal.finish(p.seq)
    await this.ack(p.seq)
  }

  private turnFor (p: RenderedPacket, sessionId: string): Turn {
    return new Turn(p, sessionId, {
      cfg: this.cfg,
      agent: this.agent as AgentProcess,
      permissions: this.permissions,
      send: async (x) => await this.send(x),
      approverId: async (r) => await this.approverId(r),
      onState: () => this.status(),
      log: (l) => this.log(l)
    })
  }

  /** A prompt that was in flight when the agent or the daemon died: reported, never dropped. */
  private async reportLost (p: RenderedPacket, attempts: number): Promise<void> {
    const reason = `interrupted: the agent process or the amesh daemon ended while this prompt was in flight (${attempts} attempt${attempts === 1 ? '' : 's'})`
    this.log(`stop ${p.id}: ${reason}`)
    await this.turnFor(p, '').report({ ok: false, reason, crashed: true })
    this.journal.finish(p.seq)
    await this.ack(p.seq)
  }

  /** Wait for the running prompts to report (after the agent ended). */
  async drain (): Promise<void> {
    await Promise.all([...this.chains.values()])
  }
}

/** Run the bridge until the agent or the control connection ends; resolves with the exit code. */
export async function runBridge (opts: BridgeOptions): Promise<number> {
  const cfg = bridgeConfig()
  const log = createLogger(`amesh:acp:${opts.node}`)
  const control = await ControlClient.connect(homePaths(opts.home).socket)
  const bridge = new Bridge(opts, cfg, control)
  bridge.status() // a fresh status: nothing of the previous process's is shown as current
  const agent = await bridge.start()
  process.once('SIGTERM', () => { agent.kill(); control.close(); process.exit(0) })
  const follow = control.stream('inbox.follow', { node: opts.node }, (e) => bridge.handle(e as RenderedPacket))
  const result = await Promise.race([
    agent.ended.then((why) => ({ agent: why })),
    follow.then(() => ({ control: 'the inbox stream ended' }), (err: unknown) => ({ control: errorMessage(err) }))
  ])
  if ('agent' in result) {
    log(`acp agent process ended: ${result.agent}; reporting prompts in flight`)
    await bridge.drain()
    control.close()
    return 1
  }
  log(`control connection lost (${result.control}): ending the agent`)
  agent.kill()
  return 1
}
