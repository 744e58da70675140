import type { RenderedPacket } from '../control/wire.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { RECONNECT_DELAY } from './constants.js'
import type { DaemonLink } from './link.js'
import { channelEvent, type ChannelEvent } from './render.js'
import { attach, PushRecorder, RepushPlan, type Attachment } from './consumption.js'

export interface ChannelPumpInit {
  link: DaemonLink
  node: string
  /** write one channel event; resolves once the bytes are written */
  notify: (event: ChannelEvent) => Promise<void>
  /** a packet that is not shown (e.g. a permission verdict) returns true */
  consume?: (p: RenderedPacket) => Promise<boolean>
  /** every packet, before it is shown (loop guard bookkeeping) */
  observe?: (p: RenderedPacket) => void
  /** backlog messages pushed again to a new attachment (the rest stay unread, see the inbox tool) */
  repushLimit: number
  /** each new attachment, before its first push */
  onAttach?: (a: Attachment) => void
  log: Logger
}

function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Pushes the node's unread messages to Claude Code: attaches the node (the
 * daemon counts the session as present), follows the inbox from the cursor,
 * writes each unread packet as a channel event and records it as pushed. A
 * push never reads: only the session's reply, ack or inbox tool does (see
 * docs/DELIVERY.md). On any failure the connection is dropped and a new
 * attachment pushes every unread message again, in order (at least once).
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
    const at = await attach(client, this.init.node, this.init.log)
    this.init.onAttach?.(at)
    const plan = new RepushPlan(at, this.init.repushLimit)
    const recorder = new PushRecorder(async (seqs) => await client.call('inbox.pushed', { node: this.init.node, attachment: at.attachment, seqs }), this.init.log)
    let first = true
    let chain = Promise.resolve()
    let failure: unknown
    const onEvent = (event: unknown): void => {
      chain = chain.then(async () => {
        const p = event as RenderedPacket
        if (failure !== undefined || this.stopped || !plan.shouldPush(p.seq)) return
        try {
          const extra = first ? { unread: String(at.unread), unread_not_pushed: String(plan.held) } : undefined
          first = false
          if (await this.push(p, extra)) recorder.add(p.seq)
        } catch (err) {
          failure = err
          this.init.link.reset(client) // ends the stream; the loop attaches again
        }
      })
    }
    try {
      await client.stream('inbox.follow', { node: this.init.node, after: at.cursor }, onEvent)
    } finally {
      await chain
      await recorder.settled()
    }
    if (failure !== undefined) throw failure
  }

  /** Show one packet; true when it was written as a channel event (a relay verdict is consumed and read instead). */
  private async push (p: RenderedPacket, extra?: Record<string, string>): Promise<boolean> {
    this.init.observe?.(p)
    const consumed = await this.init.consume?.(p) ?? false
    if (consumed) {
      await this.init.link.call('inbox.mark_read', { node: this.init.node, seqs: [p.seq], by: 'relay' })
      return false
    }
    const event = channelEvent(p)
    if (extra !== undefined) Object.assign(event.meta, extra)
    await this.init.notify(event)
    return true
  }
}
