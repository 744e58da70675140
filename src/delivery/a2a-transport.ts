// The transport for `a2a` targets: external A2A agents reached over HTTP
// from this host. A packet is queued durably in the outbox (destination
// `a2a:<agent node id>`, so the outbox's cap, expiry index and dead letters
// serve it as they serve remote hosts) and `send` answers `queued`. One
// worker per agent sends its queue in order through the SDK client
// (a2a-exchange.ts), retrying with backoff while the agent is unreachable;
// an answer that refuses the message, and the TTL running out, make a dead
// letter with an ERROR notice to the sender, in one batch.
import type { Packet } from '../packet/types.js'
import type { A2aTaskStore } from '../store/a2a-tasks.js'
import type { Committer } from '../store/db.js'
import type { InboxStore } from '../store/inbox.js'
import type { Doomed, OutboxEntry, OutboxStore } from '../store/outbox.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { isTransient, refusalCode } from './a2a-client.js'
import type { A2aExchange } from './a2a-exchange.js'
import type { Notices } from './notices.js'
import { deadLetter, TtlSweep } from './dead-letters.js'
import { a2aQueue, isA2aQueue, type QueueResult, type Transport, type TransportTarget } from './transport.js'

/** first and longest wait before sending again to an agent that did not answer */
const RETRY_FIRST = 500
const RETRY_MAX = 30 * SECOND

/** An A2A agent target: the a2a node's id and name. */
export interface A2aAgentTarget extends TransportTarget { readonly id: string, readonly name: string }

export interface A2aTransportComponents {
  committer: Committer
  inbox: Pick<InboxStore, 'append'>
  outbox: OutboxStore
  tasks: A2aTaskStore
  exchange: A2aExchange
  notices: Pick<Notices, 'item'>
  label: (nodeId: string) => string
  log: Logger
  /** told about dead letters after they are stored (the sender's receipt: dead or refused) */
  dead?: (items: Doomed[]) => Promise<void>
}

/** One agent's queue, sent in order, one packet at a time. */
class AgentQueue {
  private running = false
  private retry?: NodeJS.Timeout
  private wait = RETRY_FIRST
  /** the outbox key being sent now (the TTL sweep leaves it alone) */
  inflight?: string
  private readonly abort = new AbortController()

  constructor (private readonly dest: string, private readonly t: A2aTransport, private readonly c: A2aTransportComponents) {}

  wake (): void {
    if (this.running || this.abort.signal.aborted) return
    clearTimeout(this.retry)
    this.retry = undefined
    void this.run()
  }

  stop (): void {
    this.abort.abort()
    clearTimeout(this.retry)
  }

  private async run (): Promise<void> {
    this.running = true
    try {
      for (;;) {
        if (this.abort.signal.aborted) return
        const [entry] = await this.c.outbox.list(this.dest, undefined, 1)
        if (entry === undefined) return
        this.inflight = entry.key
        const sent = await this.sendOne(entry).finally(() => { this.inflight = undefined })
        if (!sent) { this.later(); return }
        this.wait = RETRY_FIRST
      }
    } catch (err) {
      this.c.log(`a2a queue ${this.dest}: ${errorMessage(err)}`)
      this.later()
    } finally {
      this.running = false
    }
  }

  /** true when the entry is settled (accepted or dead); false when the agent should be tried again later. */
  private async sendOne (entry: OutboxEntry): Promise<boolean> {
    try {
      await this.c.exchange.dispatch(entry, this.abort.signal)
      return true
    } catch (err) {
      if (this.abort.signal.aborted) return false
      if (isTransient(err)) {
        this.c.log(`a2a ${this.c.label(entry.to)} unreachable (retry in ${this.wait} ms): ${errorMessage(err)}`)
        return false
      }
      await this.t.deadLetter([{ entry, code: refusalCode(err), reason: `${this.c.label(entry.to)} refused it: ${errorMessage(err)}` }])
      return true
    }
  }

  private later (): void {
    if (this.abort.signal.aborted) return
    this.retry = setTimeout(() => { this.retry = undefined; this.wake() }, this.wait)
    this.retry.unref()
    this.wait = Math.min(RETRY_MAX, this.wait * 2)
  }
}

export class A2aTransport implements Transport<A2aAgentTarget> {
  private readonly queues = new Map<string, AgentQueue>()
  private readonly sweeper: TtlSweep
  private started = false

  constructor (private readonly c: A2aTransportComponents) {
    this.sweeper = new TtlSweep({
      outbox: c.outbox,
      skip: (e) => !isA2aQueue(e.dest) || this.queues.get(e.dest)?.inflight === e.key,
      reason: (e) => `the A2A agent ${c.label(e.to)} did not accept it before its TTL ran out`,
      deadLetter: async (items) => await this.deadLetter(items),
      log: c.log,
      name: 'a2a ttl sweep'
    })
  }

  async start (): Promise<void> {
    if (this.started) return
    this.started = true
    await this.c.tasks.load()
    for (const dest of this.c.outbox.destinations()) if (isA2aQueue(dest)) this.queue(dest).wake()
    await this.c.exchange.resume()
    this.sweeper.start()
  }

  async stop (): Promise<void> {
    if (!this.started) return
    this.started = false
    this.sweeper.stop()
    for (const q of this.queues.values()) q.stop()
    this.queues.clear()
    this.c.exchange.stop()
  }

  private queue (dest: string): AgentQueue {
    let q = this.queues.get(dest)
    if (q === undefined) { q = new AgentQueue(dest, this, this.c); this.queues.set(dest, q) }
    return q
  }

  /** Queue the packet for the agent; resolves once it is durable. */
  async deliver (packet: Packet, bytes: Uint8Array, target: A2aAgentTarget, ttl: number): Promise<QueueResult> {
    const dest = a2aQueue(target.id)
    const { ops, entry } = this.c.outbox.stage(dest, packet.id, packet.to, target.name, packet.from, Date.now() + ttl, bytes)
    try {
      await this.c.committer.write(ops) // handed over in the same tick as stage(): key order = commit order
    } catch (err) {
      this.c.outbox.release(entry)
      throw err
    }
    if (this.started) this.queue(dest).wake()
    return { id: packet.id, state: 'queued' }
  }

  /** Stop sending to and following an agent (its node is being removed; what is queued dies as A2A_AGENT_GONE). */
  async forget (agentId: string): Promise<void> {
    this.c.exchange.forgetAgent(agentId)
    const drop = this.c.tasks.dropAgent(agentId)
    if (drop.ops.length > 0) await this.c.committer.write(drop.ops)
    drop.applied()
    const dest = a2aQueue(agentId)
    if (this.c.outbox.depthOf(dest) > 0) this.queue(dest).wake()
  }

  /** Dead letters with the sender's ERROR notice, in one synced batch. */
  async deadLetter (items: Doomed[]): Promise<void> {
    await deadLetter(this.c, items, undefined, async (killed) => { await this.c.dead?.(killed) })
  }
}
