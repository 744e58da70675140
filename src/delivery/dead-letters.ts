// The end of an outbox entry that is not delivered, shared by the transports
// (peer links, A2A agents): dead letters with the sender's ERROR notice, and
// the TTL sweep, one per transport, which skips the entries it does not own
// or holds in flight and dead-letters the rest, a batch at a time.
import type { WriteOp } from '../store/db.js'
import type { InboxStore } from '../store/inbox.js'
import type { Doomed, OutboxEntry, OutboxStore } from '../store/outbox.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import type { Notices } from './notices.js'

const SWEEP_INTERVAL = 1 * SECOND
const SWEEP_BATCH = 1000

export interface TtlSweepParts {
  outbox: OutboxStore
  /** entries this sweep leaves alone: another transport's, or in flight */
  skip: (entry: OutboxEntry) => boolean
  /** why an entry expired, as its dead letter and ERROR notice say */
  reason: (entry: OutboxEntry) => string
  deadLetter: (items: Doomed[]) => Promise<void>
  log: Logger
  /** log prefix, e.g. "ttl sweep" */
  name: string
}

export class TtlSweep {
  private timer?: NodeJS.Timeout
  private sweeping = false

  constructor (private readonly p: TtlSweepParts) {}

  start (): void {
    this.timer = setInterval(() => { void this.sweep() }, SWEEP_INTERVAL)
    this.timer.unref()
  }

  stop (): void { clearInterval(this.timer) }

  /** Dead-letter every expired entry not skipped; one pass at a time. Resolves with how many. */
  async sweep (now = Date.now()): Promise<number> {
    if (this.sweeping) return 0
    this.sweeping = true
    let total = 0
    try {
      for (;;) {
        const expired = await this.p.outbox.expired(now, SWEEP_BATCH, this.p.skip)
        await this.p.deadLetter(expired.map((entry) => ({ entry, code: 'TTL_EXPIRED', reason: this.p.reason(entry) })))
        total += expired.length
        if (expired.length < SWEEP_BATCH) return total
      }
    } catch (err) {
      this.p.log(`${this.p.name}: ${errorMessage(err)}`)
      return total
    } finally {
      this.sweeping = false
    }
  }
}

export interface DeadLetterParts {
  outbox: OutboxStore
  inbox: Pick<InboxStore, 'append'>
  notices: Pick<Notices, 'item'>
  label: (nodeId: string) => string
  log: Logger
}

/**
 * Dead letters: the outbox entries move to `x!` and each sender node gets an
 * ERROR notice in its own inbox, in the same synced batch (a crash cannot
 * leave one without the other). `extra` adds the transport's own ops to that
 * batch; `after` runs once it is written.
 */
export async function deadLetter (p: DeadLetterParts, items: Doomed[], extra?: (killed: Doomed[]) => WriteOp[], after?: (killed: Doomed[]) => void | Promise<void>): Promise<void> {
  if (items.length === 0) return
  await p.outbox.kill(items, async (ops, killed) => {
    const notices = killed.map(({ entry, code, reason }) => p.notices.item(entry.from, `message ${entry.packetId} to ${p.label(entry.to)} was not delivered: ${code}: ${reason}`, entry.packetId))
    const results = await p.inbox.append(notices, { extra: extra === undefined ? ops : [...ops, ...extra(killed)] })
    results.forEach((r, k) => {
      const { entry, code, reason } = killed[k]
      p.log(`dead letter ${entry.packetId} to ${entry.to}: ${code} ${reason}`)
      if ('error' in r) p.log(`notice to ${entry.from} failed: ${r.error.message}`)
    })
    await after?.(killed)
  })
}
