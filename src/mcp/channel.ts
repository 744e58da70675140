import type { RenderedPacket } from '../control/wire.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { RECONNECT_DELAY } from './constants.js'
import type { DaemonLink } from './link.js'
import { channelEvent, type ChannelEvent } from './render.js'

export interface ChannelPumpInit {
  link: DaemonLink
  node: string
  /** write one channel event; resolves once the bytes are written */
  notify: (event: ChannelEvent) => Promise<void>
  /** a packet that is not shown (e.g. a permission verdict) returns true */
  consume?: (p: RenderedPacket) => Promise<boolean>
  /** every packet, before it is shown (loop guard bookkeeping) */
  observe?: (p: RenderedPacket) => void
  log: Logger
}

function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Pushes the node's inbox to Claude Code: follows the inbox from the acked
 * cursor, writes each packet as a channel event, and acks it only after the
 * write completed. On any failure the connection is dropped and following
 * restarts from the durable cursor, so nothing unpushed is skipped.
 */
export class ChannelPump {
  private stopped = false
  private running?: Promise<void>
  private lastError = ''

  constructor (private readonly init: ChannelPumpInit) {}

  start (): void {
    this.running ??= this.loop()
  }

  async stop (): Promise<void> {
    this.stopped = true
    this.init.link.reset()
    await this.running
  }

  private async loop (): Promise<void> {
    while (!this.stopped) {
      try {
        await this.followOnce()
      } catch (err) {
        const message = errorMessage(err)
        if (!this.stopped && message !== this.lastError) this.init.log(`channel: ${message}; retrying every ${RECONNECT_DELAY} ms`)
        this.lastError = message
      }
      if (!this.stopped) await sleep(RECONNECT_DELAY)
    }
  }

  private async followOnce (): Promise<void> {
    const client = await this.init.link.get()
    if (this.lastError !== '') this.init.log('channel: connected to the daemon again')
    this.lastError = ''
    let chain = Promise.resolve()
    let failure: unknown
    const onEvent = (event: unknown): void => {
      chain = chain.then(async () => {
        if (failure !== undefined || this.stopped) return
        try {
          await this.push(event as RenderedPacket)
        } catch (err) {
          failure = err
          this.init.link.reset(client) // ends the stream; the loop follows again from the cursor
        }
      })
    }
    try {
      await client.stream('inbox.follow', { node: this.init.node }, onEvent)
    } finally {
      await chain
    }
    if (failure !== undefined) throw failure
  }

  private async push (p: RenderedPacket): Promise<void> {
    this.init.observe?.(p)
    const consumed = await this.init.consume?.(p) ?? false
    if (!consumed) await this.init.notify(channelEvent(p))
    await this.init.link.call('ack', { node: this.init.node, seq: p.seq })
  }
}
