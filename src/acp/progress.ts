// A prompt's live progress (session/update) as CHECKPOINT packets to the
// requester, coalesced: at most one per interval, each at most `bytes` long
// (what does not fit is counted, not sent). `flush` sends what waits now (before
// an ESCALATE, so the approver sees what led up to it).

export interface ProgressInit {
  intervalMs: number
  bytes: number
  /** send one CHECKPOINT with this context (JSON text) */
  emit: (context: string) => Promise<void>
  /** the prompt packet this progress belongs to */
  promptId: string
}

export class Progress {
  private text = ''
  private events: string[] = []
  private last = 0
  private timer?: NodeJS.Timeout
  private dropped = 0
  private closed = false

  constructor (private readonly init: ProgressInit) {}

  /** Agent message text. */
  chunk (text: string): void { this.text += text; this.arm() }

  /** A tool call, plan or other update, as one short line. */
  event (line: string): void { this.events.push(line); this.arm() }

  private arm (): void {
    if (this.closed || this.timer !== undefined) return
    const wait = Math.max(0, this.last + this.init.intervalMs - Date.now())
    this.timer = setTimeout(() => { this.timer = undefined; void this.flush() }, wait)
  }

  private take (): string | undefined {
    if (this.text === '' && this.events.length === 0) return undefined
    const body = { acp: 'progress', prompt: this.init.promptId, text: this.text, events: this.events, dropped_chars: 0 }
    this.text = ''
    this.events = []
    let json = JSON.stringify(body)
    while (Buffer.byteLength(json) > this.init.bytes && (body.text.length > 0 || body.events.length > 0)) {
      const over = Buffer.byteLength(json) - this.init.bytes
      if (body.text.length > 0) {
        const cut = Math.min(body.text.length, Math.max(16, over))
        body.text = body.text.slice(0, body.text.length - cut)
        this.dropped += cut
      } else {
        this.dropped += body.events.pop()?.length ?? 0
      }
      body.dropped_chars = this.dropped
      json = JSON.stringify(body)
    }
    this.dropped = 0
    return json
  }

  /** Send what waits, now. */
  async flush (): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const context = this.take()
    if (context === undefined) return
    this.last = Date.now()
    await this.init.emit(context)
  }

  /** The turn ended: nothing more is sent (the RETURN carries the answer). */
  close (): void {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
  }
}
