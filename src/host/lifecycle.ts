// Start and stop in one loop (the js-libp2p way): every service is a
// Startable; the composition root lists them in start order, and they stop
// in the reverse order. Start and stop are safe to call twice.
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { Startable } from '../util/startable.js'

export type { Startable }

interface Entry { name: string, service: Partial<Startable>, state: 'new' | 'started' | 'stopped' }

/** The services of one host, started in the order they were added and stopped in reverse. */
export class Lifecycle {
  private readonly entries: Entry[] = []
  private starting: Promise<void> = Promise.resolve()
  private stopping?: Promise<void>

  constructor (private readonly log: Logger) {}

  /** Add a service (either half may be absent: a part that needs only stopping, or only starting). */
  add (name: string, service: Partial<Startable>): void {
    this.entries.push({ name, service, state: 'new' })
  }

  /**
   * Start, in order, every service added since the last start (a second call
   * starts nothing twice); on a failure, stop every started one (and the
   * failed one) and rethrow.
   */
  async start (): Promise<void> {
    this.starting = this.starting.then(async () => await this.startNew())
    await this.starting
  }

  private async startNew (): Promise<void> {
    for (const e of this.entries) {
      if (e.state !== 'new' || this.stopping !== undefined) continue
      e.state = 'started'
      try {
        await e.service.start?.()
      } catch (err) {
        await this.stop()
        throw err
      }
    }
  }

  /** Stop the started services in reverse order; a failure is logged and the rest still stop. */
  async stop (): Promise<void> {
    this.stopping ??= this.stopAll()
    await this.stopping
  }

  private async stopAll (): Promise<void> {
    for (const e of [...this.entries].reverse()) {
      if (e.state !== 'started') continue
      e.state = 'stopped'
      try {
        await e.service.stop?.()
      } catch (err) {
        this.log(`stopping ${e.name}: ${errorMessage(err)}`)
      }
    }
  }
}
