// External A2A agents as nodes (`node add-a2a`), loaded on first use: the
// A2A SDK the stack rests on (and the JOSE library it loads) took ~9 MiB of
// an idle host's RSS and ~2 MiB of its V8 heap (docs/PERFORMANCE.md, session
// 7), and most hosts have no A2A agent. The stack loads when the host starts
// with an A2A node, an A2A queue in the outbox or an open A2A task, and
// otherwise on the first call that needs it (adding an agent, sending to or
// removing one); from then on every call goes to it unchanged.
import type { Transport, QueueResult } from '../delivery/transport.js'
import { isA2aQueue } from '../delivery/transport.js'
import type { A2aAgentTarget } from '../delivery/a2a-transport.js'
import type { Packet } from '../packet/types.js'
import { A2aTaskStore } from '../store/a2a-tasks.js'
import type { A2aEndpoint } from '../store/nodes.js'
import type { A2aStack, A2aStackComponents } from './a2a-stack.js'

/** What the host's other services use of the A2A agents. */
export interface A2aAgents {
  readonly clients: { fetchCard: (url: string) => Promise<A2aEndpoint> }
  readonly transport: A2aAgentsTransport
}

/** The A2A transport as the sender, the nodes API and the lifecycle see it. */
export interface A2aAgentsTransport extends Transport<A2aAgentTarget> {
  start: () => Promise<void>
  stop: () => Promise<void>
  forget: (agentId: string) => Promise<void>
}

/** The stack, built on first use; started with the host, or at once when the host already runs. */
class LazyA2a implements A2aAgentsTransport {
  private stack?: Promise<A2aStack>
  private running = false
  /** the stack's start, once per host start: calls made meanwhile wait for it */
  private starting?: Promise<void>

  constructor (private readonly c: A2aStackComponents) {}

  /** Whether anything stored needs the stack at start: an A2A node, an A2A queue, an open task. */
  private async inUse (): Promise<boolean> {
    const { nodes, outbox } = this.c.stores
    if (nodes.list().some((n) => n.record.kind === 'a2a')) return true
    if (outbox.destinations().some(isA2aQueue)) return true
    await this.c.tasks.load()
    return this.c.tasks.count() > 0
  }

  private load (): Promise<A2aStack> {
    this.stack ??= import('./a2a-stack.js').then((m) => m.buildA2aStack(this.c))
    return this.stack
  }

  /** The stack, started if the host runs. */
  private async ready (): Promise<A2aStack> {
    const s = await this.load()
    if (this.running) {
      this.starting ??= s.transport.start()
      await this.starting
    }
    return s
  }

  async start (): Promise<void> {
    this.running = true
    if (this.stack === undefined && !(await this.inUse())) return
    await this.ready()
  }

  async stop (): Promise<void> {
    this.running = false
    this.starting = undefined
    if (this.stack !== undefined) await (await this.stack).transport.stop()
  }

  async deliver (packet: Packet, bytes: Uint8Array, target: A2aAgentTarget, ttl: number): Promise<QueueResult> {
    return await (await this.ready()).transport.deliver(packet, bytes, target, ttl)
  }

  async forget (agentId: string): Promise<void> {
    await (await this.ready()).transport.forget(agentId)
  }

  async fetchCard (url: string): Promise<A2aEndpoint> {
    return await (await this.ready()).clients.fetchCard(url)
  }
}

/** The host's A2A agents: `clients.fetchCard` and the transport load the stack when first used. */
export function a2aAgents (c: Omit<A2aStackComponents, 'tasks'>): A2aAgents {
  const lazy = new LazyA2a({ ...c, tasks: new A2aTaskStore(c.stores.db) })
  return { clients: { fetchCard: async (url) => await lazy.fetchCard(url) }, transport: lazy }
}
