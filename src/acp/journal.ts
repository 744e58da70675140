// The bridge's durable state, one JSON file under the node's agent dir
// (written whole, atomically): the ACP session id of each conversation, the
// prompts in flight (so a crash is reported, never dropped) and the seqs
// already handled above the inbox cursor (so a redelivery is not run twice).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { JOURNAL_FILE, MAX_DONE } from './constants.js'

export interface InFlight {
  /** the prompt packet's id and sender (the requester) */
  id: string
  from: string
  conversation: string
  /** runs started (1 = the first run) */
  attempts: number
}

interface State {
  sessions: Record<string, string>
  inflight: Record<string, InFlight>
  done: number[]
}

export class Journal {
  private readonly file: string
  private state: State = { sessions: {}, inflight: {}, done: [] }

  constructor (dir: string) {
    this.file = join(dir, JOURNAL_FILE)
    if (existsSync(this.file)) {
      try {
        const s = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<State>
        this.state = { sessions: s.sessions ?? {}, inflight: s.inflight ?? {}, done: s.done ?? [] }
      } catch { /* a damaged journal: start over (sessions are new, nothing is in flight) */ }
    }
  }

  private save (): void {
    writeFileSync(this.file + '.tmp', JSON.stringify(this.state) + '\n', { mode: 0o600 })
    renameSync(this.file + '.tmp', this.file)
  }

  session (conversation: string): string | undefined { return this.state.sessions[conversation] }
  get sessionCount (): number { return Object.keys(this.state.sessions).length }

  setSession (conversation: string, sessionId: string): void {
    if (this.state.sessions[conversation] === sessionId) return
    this.state.sessions[conversation] = sessionId
    this.save()
  }

  inflight (seq: number): InFlight | undefined { return this.state.inflight[String(seq)] }
  isDone (seq: number): boolean { return this.state.done.includes(seq) }

  begin (seq: number, entry: InFlight): void {
    this.state.inflight[String(seq)] = entry
    this.save()
  }

  /** The packet is handled: no longer in flight; remembered until the cursor passes it. */
  finish (seq: number): void {
    delete this.state.inflight[String(seq)]
    this.state.done.push(seq)
    if (this.state.done.length > MAX_DONE) this.state.done.shift()
    this.save()
  }

  /** The inbox cursor moved to `cursor`: forget what lies at or below it. */
  acked (cursor: number): void {
    const before = this.state.done.length
    this.state.done = this.state.done.filter((s) => s > cursor)
    if (this.state.done.length !== before) this.save()
  }
}

/**
 * Which seq may be acked: the inbox cursor only moves past packets that are
 * handled, so a packet handled out of order (a verdict while a prompt waits)
 * does not ack the prompt before it.
 */
export class AckTracker {
  private readonly open = new Set<number>()
  private highest = 0
  private acked = 0

  received (seq: number): void {
    // the stream starts after the daemon's cursor: nothing below the first seq is ours to ack
    if (this.highest === 0) this.acked = seq - 1
    this.open.add(seq)
    if (seq > this.highest) this.highest = seq
  }

  /** Mark handled; returns the new cursor to ack, or undefined when it does not move. */
  handled (seq: number): number | undefined {
    this.open.delete(seq)
    const cursor = this.open.size === 0 ? this.highest : Math.min(...this.open) - 1
    if (cursor <= this.acked) return undefined
    this.acked = cursor
    return cursor
  }
}
