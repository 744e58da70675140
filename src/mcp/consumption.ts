import type { ControlClient } from '../control/client.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'

// The session side of consumption: an attachment of the node, the record of
// what was pushed to it (batched: one daemon call, one group commit, for all
// pushes written while the previous record was being stored), and the rule of
// which backlog messages an attachment pushes again.

/** What the daemon says when a session attaches (`inbox.attach`, first event). */
export interface Attachment {
  attachment: string
  cursor: number
  last: number
  unread: number
  read_above: number[]
}

/** Open an attachment on `client`; resolves with its first event (the stream stays open). */
export async function attach (client: ControlClient, node: string, log: Logger): Promise<Attachment> {
  return await new Promise<Attachment>((resolve, reject) => {
    let first = true
    client.stream('inbox.attach', { node }, (event) => {
      if (first) { first = false; resolve(event as Attachment) }
    }).then(() => { if (first) reject(new Error('the daemon ended the attachment')) }, (err) => {
      if (first) reject(err)
      else log(`attachment ended: ${errorMessage(err)}`)
    })
  })
}

/**
 * Which packets an attachment pushes: every unread one in order, but of the
 * backlog (seqs up to `last` at attach time) at most `limit`; the rest stay
 * unread and reachable through the `inbox` tool.
 */
export class RepushPlan {
  private backlogPushed = 0
  private readonly read: Set<number>

  constructor (private readonly at: Attachment, private readonly limit: number) {
    this.read = new Set(at.read_above)
  }

  /** Whether to push `seq` now (call once per seq, in order). */
  shouldPush (seq: number): boolean {
    if (seq <= this.at.cursor || this.read.has(seq)) return false
    if (seq > this.at.last) return true
    if (this.backlogPushed >= this.limit) return false
    this.backlogPushed++
    return true
  }

  /** Backlog messages not pushed because of the bound. */
  get held (): number {
    return Math.max(0, this.at.unread - this.limit)
  }
}

/** Records pushes with the daemon, coalescing those written while a record is in flight. */
export class PushRecorder {
  private pending: number[] = []
  private flushing?: Promise<void>

  constructor (private readonly call: (seqs: number[]) => Promise<unknown>, private readonly log: Logger) {}

  add (seq: number): void {
    this.pending.push(seq)
    this.flushing ??= this.flush()
  }

  private async flush (): Promise<void> {
    while (this.pending.length > 0) {
      const seqs = this.pending
      this.pending = []
      try {
        await this.call(seqs)
      } catch (err) {
        this.log(`push record of ${seqs.length} messages not stored: ${errorMessage(err)}`)
      }
    }
    this.flushing = undefined
  }

  /** Resolves once every push added so far is recorded (or failed). */
  async settled (): Promise<void> {
    await this.flushing
  }
}
