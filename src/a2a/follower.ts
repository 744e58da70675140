// The answers: the face follows each A2A client node's inbox (inbox.follow),
// finds the task a packet answers (by in_reply_to, else by conversation), turns
// it into task events (mapping.ts) and acks it once they are durable.
import type { HostCalls } from './in-process.js'
import type { RenderedPacket } from '../control/wire.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { TaskJournal } from './journal.js'
import { eventsOfPacket } from './mapping.js'

export class InboxFollower {
  private readonly following = new Set<string>()
  private chain: Promise<void> = Promise.resolve()
  private stopped = false

  constructor (private readonly connect: () => Promise<HostCalls>, private readonly client: HostCalls, private readonly journal: TaskJournal, private readonly log: Logger) {}

  /** Follow a client node's inbox (once). */
  follow (name: string): void {
    if (this.following.has(name) || this.stopped) return
    this.following.add(name)
    void this.run(name)
  }

  private async run (name: string): Promise<void> {
    // one connection per followed inbox: a stream holds its connection's attention
    const conn = await this.connect().catch((err: unknown) => { this.log(`a2a: cannot follow ${name}: ${errorMessage(err)}`) })
    if (conn === undefined) { this.following.delete(name); return }
    this.closers.push(() => conn.close())
    await conn.stream('inbox.follow', { node: name }, (pkt) => {
      this.chain = this.chain.then(async () => await this.handle(name, pkt)).catch((err: unknown) => {
        this.log(`a2a: packet ${pkt.id} for ${name}: ${errorMessage(err)}`)
      })
    }).catch((err: unknown) => { if (!this.stopped) this.log(`a2a: follow ${name} ended: ${errorMessage(err)}`) })
    this.following.delete(name)
  }

  private readonly closers: Array<() => void> = []

  private async handle (name: string, pkt: RenderedPacket): Promise<void> {
    const inReplyTo = typeof pkt.in_reply_to === 'string' ? pkt.in_reply_to : undefined
    const conversation = typeof pkt.conversation_id === 'string' ? pkt.conversation_id : undefined
    const ref = await this.client.call('a2a.task.find', { packet: inReplyTo, context: conversation })
    if (ref !== null) {
      const row = await this.client.call('a2a.task.get', { node: ref.node, task_id: ref.task })
      const contextId = typeof row?.task.contextId === 'string' ? row.task.contextId : ''
      if (row !== null) {
        await this.client.call('a2a.task.link', { node: ref.node, task_id: ref.task, packets: [pkt.id] })
        await this.journal.emit(ref.node, row.owner, ref.task, eventsOfPacket(pkt, ref.task, contextId))
      }
    }
    await this.client.call('ack', { node: name, seq: pkt.seq })
  }

  stop (): void {
    this.stopped = true
    for (const close of this.closers) close()
  }
}
