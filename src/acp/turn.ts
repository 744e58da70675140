// One prompt turn: a SPAWN or MESSAGE → session/prompt; its session/update
// stream → coalesced CHECKPOINTs; its permission requests → ESCALATEs; its
// stopReason → RETURN (end_turn) or ERROR (anything else, crash included).
// Every packet to the requester goes through one queue, so they arrive in order.
import { valueText } from '../packet/json-value.js'
import { methods, type RequestPermissionRequest, type RequestPermissionResponse, type SessionUpdate } from '@agentclientprotocol/sdk'
import type { RenderedPacket } from '../packet/render.js'
import { acpError, type AgentProcess } from './agent-process.js'
import type { BridgeConfig } from './config.js'
import { EXIT_GRACE, MAX_RESULT_CHARS } from './constants.js'
import type { Permissions } from './permissions.js'
import { Progress } from './progress.js'
import { cutText } from '../util/unicode.js'

export type SendParams = Record<string, unknown> & { to: string, signal: string }
export type Outcome = { ok: true, result: string } | { ok: false, reason: string, crashed: boolean }

export interface TurnDeps {
  cfg: BridgeConfig
  agent: AgentProcess
  permissions: Permissions
  send: (p: SendParams) => Promise<{ id: string }>
  /** the node id whose verdicts count for this requester */
  approverId: (requester: string) => Promise<string>
  onState: () => void
  log: (line: string) => void
}

/** The prompt text of a packet: its text, then its context. */
export function promptText (p: RenderedPacket): string {
  const parts = [p.payload.text, p.payload.context === undefined ? undefined : `context:\n${valueText(p.payload.context)}`]
  return parts.filter((x): x is string => x !== undefined && x !== '').join('\n\n')
}

function textOf (u: SessionUpdate): string | undefined {
  return u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? u.content.text : undefined
}

export class Turn {
  state: 'prompting' | 'awaiting permission' = 'prompting'
  private answer = ''
  private queue: Promise<unknown> = Promise.resolve()
  private readonly abort = new AbortController()
  private readonly progress: Progress

  constructor (readonly packet: RenderedPacket, readonly sessionId: string, private readonly deps: TurnDeps) {
    this.progress = new Progress({
      intervalMs: deps.cfg.checkpointMs,
      bytes: deps.cfg.checkpointBytes,
      promptId: packet.id,
      emit: async (context) => { await this.enqueue('CHECKPOINT', { context }) }
    })
  }

  get requester (): string { return typeof this.packet.return_to === 'string' ? this.packet.return_to : this.packet.from_id }

  /** Send to the requester, in order after everything sent before. */
  async enqueue (signal: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<{ id: string }> {
    const p = this.packet
    const params: SendParams = { to: this.requester, signal, payload, in_reply_to: p.id, conversation_id: p.conversation_id ?? p.id, ...extra }
    const next = this.queue.then(async () => await this.deps.send(params))
    this.queue = next.catch((err: unknown) => this.deps.log(`${signal} to ${p.from} not sent: ${err instanceof Error ? err.message : String(err)}`))
    return await next
  }

  update (u: SessionUpdate): void {
    const text = textOf(u)
    if (text !== undefined) { this.answer += text; this.progress.chunk(text); return }
    if (u.sessionUpdate === 'tool_call') this.progress.event(`tool ${u.title} (${u.kind ?? 'other'}, ${u.status ?? 'pending'})`)
    else if (u.sessionUpdate === 'tool_call_update' && u.status !== undefined && u.status !== null) this.progress.event(`tool ${u.title ?? u.toolCallId}: ${u.status}`)
    else if (u.sessionUpdate === 'plan') this.progress.event(`plan: ${u.entries.map((e) => `[${e.status}] ${e.content}`).join('; ')}`)
  }

  async permission (req: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    this.state = 'awaiting permission'
    this.deps.onState()
    try {
      await this.progress.flush()
      return await this.deps.permissions.ask(req, {
        approverId: await this.deps.approverId(this.requester),
        timeoutMs: this.deps.cfg.permissionTimeoutMs,
        signal: this.abort.signal,
        escalate: async (text, options, conversation) => (await this.enqueue('ESCALATE', { text, options }, { conversation_id: conversation, requires_reply: true, priority: 'high' })).id
      })
    } finally {
      this.state = 'prompting'
      this.deps.onState()
    }
  }

  /** `session/cancel` (a cancel packet): the agent stops; waiting permission requests are cancelled. */
  async cancel (): Promise<void> {
    this.abort.abort()
    await this.deps.agent.conn.agent.notify(methods.agent.session.cancel, { sessionId: this.sessionId })
  }

  /** Run the prompt to its stop reason. */
  async run (): Promise<Outcome> {
    try {
      const r = await this.deps.agent.conn.agent.request(methods.agent.session.prompt, { sessionId: this.sessionId, prompt: [{ type: 'text', text: promptText(this.packet) }] })
      this.progress.close()
      if (r.stopReason === 'end_turn') return { ok: true, result: cutText(this.answer, MAX_RESULT_CHARS) }
      if (r.stopReason === 'cancelled') return { ok: false, reason: 'cancelled', crashed: false }
      return { ok: false, reason: `stopped: ${r.stopReason}${this.answer === '' ? '' : ` (${cutText(this.answer, 500)})`}`, crashed: false }
    } catch (err) {
      this.progress.close()
      const why = await Promise.race([this.deps.agent.ended, new Promise<undefined>((resolve) => setTimeout(resolve, EXIT_GRACE))])
      if (why !== undefined) return { ok: false, reason: `agent process crashed: ${why}`, crashed: true }
      return { ok: false, reason: `agent error: ${acpError(err)}`, crashed: false }
    }
  }

  /** Send the outcome: RETURN with the answer, or ERROR with the reason. */
  async report (o: Outcome): Promise<void> {
    if (o.ok) await this.enqueue('RETURN', { result: o.result })
    else await this.enqueue('ERROR', { context: JSON.stringify({ acp: 'error', prompt: this.packet.id, reason: o.reason }) })
  }
}
