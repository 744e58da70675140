// One queued packet to an external A2A agent: sent with the SDK client,
// settled (removed from the outbox) in the same batch as the first answer
// once the agent's HTTP answer says it has the message, and the task it
// opened followed (the rest of the stream, then GetTask polls) until its
// final answer is in the sender's inbox. Open tasks are records
// (store/a2a-tasks.ts), so a restart picks them up again (`resume`).
import type { Client } from '@a2a-js/sdk/client'
import type { Artifact, SendMessageRequest, StreamResponse } from '@a2a-js/sdk'
import { decodePacket } from '../packet/codec.js'
import type { Packet } from '../packet/types.js'
import type { A2aTaskStore, OpenA2aTask } from '../store/a2a-tasks.js'
import type { InboxStore } from '../store/inbox.js'
import type { LocalNode, NodeStore } from '../store/nodes.js'
import type { OutboxEntry, OutboxStore } from '../store/outbox.js'
import { defineError, errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { A2aNotAnAgentError, isTransient, streams, type A2aClients } from './a2a-client.js'
import { toA2aMessage } from './a2a-mapping.js'
import { stateName, updateOf, updateOfTask, type A2aAnswers, type A2aUpdate, type AskContext } from './a2a-answers.js'

/** The packet's target is no longer an a2a node of this host (removed after the send). */
export const A2aAgentGoneError = defineError('A2aAgentGoneError', 'A2A_AGENT_GONE')

/** first and longest wait between GetTask polls of an open task */
const POLL_FIRST = 200
const POLL_MAX = 10 * SECOND

export interface A2aExchangeComponents {
  inbox: Pick<InboxStore, 'entryById'>
  outbox: Pick<OutboxStore, 'remove'>
  nodes: Pick<NodeStore, 'get'>
  tasks: A2aTaskStore
  clients: A2aClients
  answers: A2aAnswers
  log: Logger
  /** told once the agent accepted a message (the sender's receipt: delivered) */
  accepted?: (entries: OutboxEntry[]) => Promise<void>
}

/** A task being followed: who asked, its record, the artifacts its stream carried so far. */
interface Followed { ask: AskContext, taskId: string, artifacts: Map<string, Artifact>, stop: AbortController }

const isInterrupted = (state: string): boolean => state === 'INPUT_REQUIRED' || state === 'AUTH_REQUIRED'

/**
 * Following a task ends at a new interruption, once it is answered (ESCALATE,
 * BLOCKED_ON): the task waits for the sender. The interruption already
 * answered, seen again right after the sender's reply (the task has not
 * moved on yet), does not end it.
 */
function waitsForSender (u: A2aUpdate, answered: boolean): boolean {
  return answered && u.status !== undefined && isInterrupted(stateName(u.status.state))
}

export class A2aExchange {
  private readonly followers = new Map<string, Followed>()
  private stopped = false

  constructor (private readonly c: A2aExchangeComponents) {}

  stop (): void {
    this.stopped = true
    for (const f of this.followers.values()) f.stop.abort()
    this.followers.clear()
  }

  /** Stop following an agent's tasks (its node is being removed). */
  forgetAgent (agentId: string): void {
    for (const [key, f] of this.followers) if (f.ask.agent.id === agentId) { f.stop.abort(); this.followers.delete(key) }
  }

  private agentOf (id: string): LocalNode & { record: { a2a: NonNullable<LocalNode['record']['a2a']> } } {
    const node = this.c.nodes.get(id)
    if (node?.record.kind !== 'a2a' || node.record.a2a === undefined) throw new A2aAgentGoneError(`${id} is no longer an A2A agent node on this host`)
    return node as LocalNode & { record: { a2a: NonNullable<LocalNode['record']['a2a']> } }
  }

  /** The open task a reply continues: the packet replied to is this agent's answer in a task waiting for input. */
  private async continuation (packet: Packet, agentId: string): Promise<OpenA2aTask | undefined> {
    if (packet.in_reply_to === undefined) return undefined
    const entry = await this.c.inbox.entryById(packet.from, packet.in_reply_to)
    if (entry === undefined) return undefined
    const original = decodePacket(entry.packet)
    if (original.from !== agentId || original.session_id === undefined) return undefined
    const open = this.c.tasks.get(agentId, original.session_id)
    return open !== undefined && isInterrupted(open.state) ? open : undefined
  }

  /** Send one queued packet; resolves once the agent accepted it and that is durable; throws what went wrong. */
  async dispatch (entry: OutboxEntry, signal: AbortSignal): Promise<void> {
    const packet = decodePacket(entry.packet)
    const agent = this.agentOf(packet.to)
    const client = await this.c.clients.clientFor(agent.record.id, agent.record.a2a)
    const open = await this.continuation(packet, agent.record.id)
    const ask: AskContext = {
      agent: { id: agent.record.id, name: agent.record.name },
      from: packet.from,
      fromName: packet.from_name,
      packetId: packet.id,
      contextId: open?.contextId ?? packet.conversation_id ?? packet.id
    }
    const request: SendMessageRequest = { tenant: '', message: toA2aMessage(packet, ask.contextId, open?.taskId ?? ''), configuration: undefined, metadata: undefined }
    const continued = open === undefined ? undefined : { ...open, packetId: packet.id, replied: true }
    if (streams(agent.record.a2a)) {
      const events = client.sendMessageStream(request, { signal })
      const first = await events.next()
      if (first.done === true) throw new A2aNotAnAgentError(`${agent.record.name} ended its stream without an event`)
      const followed = await this.accept(entry, ask, continued, first.value)
      if (followed !== undefined) void this.follow(client, followed, events)
    } else {
      const result = await client.sendMessage(request, { signal })
      const followed = await this.accept(entry, ask, continued, result)
      if (followed !== undefined) void this.follow(client, followed)
    }
  }

  /**
   * The agent has the message: one batch removes it from the outbox and
   * stores the first answer and the task record. Returns the task to follow
   * (undefined when the answer was final or the task waits for input).
   */
  private async accept (entry: OutboxEntry, ask: AskContext, open: OpenA2aTask | undefined, first: Parameters<typeof updateOf>[0]): Promise<Followed | undefined> {
    const u = updateOf(first)
    if (u === undefined) throw new A2aNotAnAgentError(`${ask.agent.name} answered with an empty event`)
    // a continued task's record changes in any case: answers now reply to this packet
    const step = this.c.answers.step(ask, open, u, [], open !== undefined)
    await this.c.outbox.remove([entry], { commit: async (ops) => { await this.c.answers.write(ask, step, u.taskId, ops) } })
    await this.c.accepted?.([entry]).catch((err) => this.c.log(`a2a receipt of ${entry.packetId}: ${errorMessage(err)}`))
    if (step.closed || u.message !== undefined || waitsForSender(u, step.answer !== undefined)) return undefined
    return this.followed(ask, u.taskId)
  }

  private followed (ask: AskContext, taskId: string): Followed {
    const key = `${ask.agent.id}!${taskId}`
    this.followers.get(key)?.stop.abort()
    const f: Followed = { ask, taskId, artifacts: new Map(), stop: new AbortController() }
    this.followers.set(key, f)
    return f
  }

  private done (f: Followed): void {
    const key = `${f.ask.agent.id}!${f.taskId}`
    if (this.followers.get(key) === f) this.followers.delete(key)
  }

  /** Apply one update to a followed task; true when following ends (final, or waiting for input). */
  private async apply (f: Followed, u: A2aUpdate): Promise<boolean> {
    if (u.artifact !== undefined) {
      const prior = f.artifacts.get(u.artifact.artifact.artifactId)
      const parts = u.artifact.append && prior !== undefined ? [...prior.parts, ...u.artifact.artifact.parts] : u.artifact.artifact.parts
      f.artifacts.set(u.artifact.artifact.artifactId, { ...u.artifact.artifact, parts })
      return false
    }
    const open = this.c.tasks.get(f.ask.agent.id, f.taskId)
    if (open === undefined) return true // answered in full already (e.g. before a restart)
    const ask = { ...f.ask, packetId: open.packetId }
    const step = this.c.answers.step(ask, open, u, [...f.artifacts.values()])
    await this.c.answers.write(ask, step, f.taskId)
    return step.closed || waitsForSender(u, step.answer !== undefined)
  }

  /** Follow a task: the rest of its stream, then GetTask polls until it is final or waits for input. */
  private async follow (client: Client, f: Followed, events?: AsyncGenerator<StreamResponse>): Promise<void> {
    try {
      if (events !== undefined && await this.drain(f, events)) return
      await this.poll(client, f)
    } catch (err) {
      if (!f.stop.signal.aborted) this.c.log(`a2a task ${f.taskId} of ${f.ask.agent.name}: ${errorMessage(err)}`)
    } finally {
      this.done(f)
    }
  }

  /** The stream's events; true when the task ended on it. A broken stream is left to the polls. */
  private async drain (f: Followed, events: AsyncGenerator<StreamResponse>): Promise<boolean> {
    try {
      for await (const ev of events) {
        if (f.stop.signal.aborted) return true
        const u = updateOf(ev)
        if (u !== undefined && await this.apply(f, u)) return true
      }
    } catch (err) {
      if (f.stop.signal.aborted) return true
      this.c.log(`a2a stream of task ${f.taskId} (${f.ask.agent.name}) broke: ${errorMessage(err)}; polling it`)
    }
    return false
  }

  private async poll (client: Client, f: Followed): Promise<void> {
    let wait = POLL_FIRST
    while (!f.stop.signal.aborted && !this.stopped) {
      try {
        const task = await client.getTask({ tenant: '', id: f.taskId, historyLength: 0 }, { signal: f.stop.signal })
        if (await this.apply(f, updateOfTask(task))) return
      } catch (err) {
        if (f.stop.signal.aborted) return
        if (!isTransient(err)) { await this.lost(f, err); return }
      }
      await sleep(wait, f.stop.signal)
      wait = Math.min(POLL_MAX, wait * 2)
    }
  }

  /** The agent no longer knows the task (or refuses to say): the sender gets an ERROR, the record goes. */
  private async lost (f: Followed, err: unknown): Promise<void> {
    const open = this.c.tasks.get(f.ask.agent.id, f.taskId)
    if (open === undefined) return
    const gone = this.c.tasks.remove(open.agent, open.taskId)
    const ask = { ...f.ask, packetId: open.packetId }
    const answer = { signal: 'ERROR' as const, payload: { context: `task ${f.taskId} of ${f.ask.agent.name} cannot be followed: ${errorMessage(err)}` } }
    await this.c.answers.write(ask, { answer, ops: [gone.op], applied: [gone.applied], closed: true }, f.taskId)
  }

  /** After a restart: follow every open task that is not waiting for the sender. */
  async resume (): Promise<void> {
    for (const open of this.c.tasks.all()) {
      if (isInterrupted(open.state) && open.replied !== true) continue
      const node = this.c.nodes.get(open.agent)
      if (node?.record.a2a === undefined) continue
      try {
        const client = await this.c.clients.clientFor(node.record.id, node.record.a2a)
        const ask: AskContext = { agent: { id: node.record.id, name: node.record.name }, from: open.from, packetId: open.packetId, contextId: open.contextId }
        void this.follow(client, this.followed(ask, open.taskId))
      } catch (err) {
        this.c.log(`a2a task ${open.taskId} of ${node.record.name} not resumed: ${errorMessage(err)}`)
      }
    }
  }
}

async function sleep (ms: number, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const t = setTimeout(done, ms)
    function done (): void { clearTimeout(t); signal.removeEventListener('abort', done); resolve() }
    signal.addEventListener('abort', done, { once: true })
  })
}
