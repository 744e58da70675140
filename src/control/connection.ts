// One control connection, bounded in bytes as well as in requests: requests
// wait (and the socket is not read) while the connection's requests in
// progress hold more than `inputBytes`, or its unsent output is over
// `outputBytes`; a paged reply is rendered one page at a time, each after
// the previous one drained; a client that stops reading is disconnected once
// a reply to it stalls for `stallMs` or its output passes `hardOutputBytes`.
// A stream (inbox.follow) already runs at the client's pace and holds no more
// than a page: a consumer that pauses it is not dropped for that.
import type { Socket } from 'node:net'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import type { RequestFrame } from './request-frame.js'
import { TurnWriter } from './coalesce.js'

const MiB = 1024 * 1024

export interface ConnectionLimits {
  /** requests of one connection in progress before the daemon stops reading it */
  maxPending: number
  /**
   * bytes of the requests read and not yet answered (lines and frames as
   * they arrived) past which no further request starts and the socket is not
   * read; one request always may run, whatever its size
   */
  inputBytes: number
  /** unsent output bytes past which no further request of the connection starts */
  outputBytes: number
  /** unsent output bytes past which the connection is dropped */
  hardOutputBytes: number
  /** ms the output may wait for the client to read before the connection is dropped */
  stallMs: number
}

export const CONTROL_LIMITS: ConnectionLimits = {
  maxPending: 1024,
  inputBytes: 4 * MiB,
  outputBytes: 4 * MiB,
  hardOutputBytes: 32 * MiB,
  stallMs: 60 * SECOND
}

/** The control client went away (or was dropped) while a reply was written. */
export class ClientGoneError extends Error {
  constructor () {
    super('control client went away')
    this.name = 'ClientGoneError'
  }
}

/** What a request holds while it waits and runs: a line's length (UTF-16 units), a frame's bytes. */
const sizeOf = (request: string | RequestFrame): number => typeof request === 'string' ? request.length : request.body.byteLength

export class Connection {
  readonly abort = new AbortController()
  private pending = 0
  /** sizeOf the running requests, and of the waiting ones */
  private runningBytes = 0
  private waitingBytes = 0
  /** request lines and binary request frames not yet started */
  private readonly waiting: Array<string | RequestFrame> = []
  /** a reply written over several writes (one line): other writes wait for it */
  private exclusive?: Promise<void>
  private stall?: NodeJS.Timeout
  /** the writes waiting for the socket's next drain (or its close) */
  private drain?: { promise: Promise<void>, resolve: () => void, reject: (err: Error) => void }
  /** every write of the connection goes through it: one socket write per turn */
  private readonly out: TurnWriter

  constructor (
    readonly socket: Socket,
    private readonly limits: ConnectionLimits,
    private readonly log: Logger,
    private readonly run: (request: string | RequestFrame) => Promise<void>,
    /** told once each request run settled */
    private readonly onSettled: () => void = () => {}
  ) {
    // a turn's writes the socket took at once after one was answered false: the same as its 'drain'
    this.out = new TurnWriter(socket, this.roomAgain)
    socket.on('drain', this.roomAgain)
    socket.on('close', () => { this.clearStall(); this.settleDrain(new ClientGoneError()); this.abort.abort(); this.waiting.length = 0; this.waitingBytes = 0 })
  }

  /**
   * The next drain (or the close), one promise shared by every write waiting
   * for it: a burst of replies past the socket's high-water mark adds no
   * listener pair per reply.
   */
  private nextDrain (): Promise<void> {
    if (this.drain === undefined) {
      let resolve = (): void => {}
      let reject = (_err: Error): void => {}
      const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej })
      this.drain = { promise, resolve, reject }
    }
    return this.drain.promise
  }

  private settleDrain (err?: Error): void {
    const d = this.drain
    if (d === undefined) return
    this.drain = undefined
    if (err === undefined) d.resolve()
    else d.reject(err)
  }

  /** The socket has room again (its 'drain', or the turn writer's word that no drain is owed) */
  private readonly roomAgain = (): void => { this.clearStall(); this.settleDrain(); this.pump() }

  /** A request finished (or failed). */
  private settled (size: number): void {
    this.pending--
    this.runningBytes -= size
    this.onSettled()
    this.pump()
  }

  /**
   * A request line or frame arrived: run it now, or once the connection has
   * room. `transient`: the frame's bytes are valid only during this call (the
   * reader's scratch), so one that must wait is copied.
   */
  request (request: string | RequestFrame, transient = false): void {
    this.waiting.push(request)
    this.waitingBytes += sizeOf(request)
    this.pump()
    const last = this.waiting.length - 1
    if (transient && this.waiting[last] === request && typeof request !== 'string') {
      this.waiting[last] = { id: request.id, body: Buffer.from(request.body) }
    }
  }

  private congested (): boolean {
    return this.out.length >= this.limits.outputBytes
  }

  /** What runs already holds the input bound: the next request waits (none running: it may start, whatever its size). */
  private full (): boolean {
    return this.pending >= this.limits.maxPending || (this.pending > 0 && this.runningBytes >= this.limits.inputBytes)
  }

  private pump (): void {
    while (this.waiting.length > 0 && !this.full() && !this.congested() && !this.socket.destroyed) {
      const request = this.waiting.shift() as string | RequestFrame
      const size = sizeOf(request)
      this.waitingBytes -= size
      this.runningBytes += size
      this.pending++
      const done = (): void => { this.settled(size) }
      this.run(request).then(done, done)
    }
    const held = this.runningBytes + this.waitingBytes
    const hold = this.waiting.length > 0 || this.full() || held >= this.limits.inputBytes || this.congested()
    if (hold && !this.socket.isPaused()) this.socket.pause()
    // resume with room for half the requests and half the bytes again (not one by one)
    else if (!hold && this.socket.isPaused() && this.pending < this.limits.maxPending / 2 && held < this.limits.inputBytes / 2) this.socket.resume()
  }

  /** Write whole reply lines (`stream`: event lines); resolves when the socket has room again. */
  async write (data: string | Uint8Array | undefined, stream = false): Promise<void> {
    while (this.exclusive !== undefined) await this.exclusive
    await this.put(data, stream)
  }

  /**
   * Write one reply made of parts (`produce` calls `put` for each): no other
   * write goes between them. Nothing is produced once the client has gone.
   */
  async whole (produce: (put: (data: string | Uint8Array) => Promise<void>) => Promise<void>): Promise<void> {
    while (this.exclusive !== undefined) await this.exclusive
    if (this.socket.destroyed) throw new ClientGoneError()
    let release = (): void => {}
    this.exclusive = new Promise<void>((resolve) => { release = resolve })
    try {
      await produce(async (data) => { await this.put(data) })
    } catch (err) {
      // part of a line is out: the stream cannot carry another reply
      if (!(err instanceof ClientGoneError)) { this.log(`control: a reply failed half-written, connection closed: ${String(err)}`); this.socket.destroy() }
      throw err
    } finally {
      this.exclusive = undefined
      release()
    }
  }

  /**
   * A call's reply line, written now when no multi-part reply holds the
   * socket: undefined once the socket took it, else the promise of its
   * write (rejected as write's would be). Not async: a burst of replies (a
   * group commit completes hundreds of sends at once) suspends no frame per
   * reply.
   */
  reply (data: string | Uint8Array): Promise<void> | undefined {
    if (this.exclusive !== undefined) return this.write(data)
    try {
      return this.putNow(data, false)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  private async put (data: string | Uint8Array | undefined, stream = false): Promise<void> {
    await this.putNow(data, stream)
  }

  /** Write data to the socket: undefined when it took it, else the promise of its next drain; throws ClientGoneError. */
  private putNow (data: string | Uint8Array | undefined, stream: boolean): Promise<void> | undefined {
    const socket = this.socket
    if (socket.destroyed) throw new ClientGoneError()
    if (data === undefined) return undefined
    // (one reply larger than the bound may go out alone, to a client that reads)
    const unsent = this.out.length
    if (unsent > 0 && unsent + data.length > this.limits.hardOutputBytes) {
      this.drop(`${unsent} bytes of replies unread`)
      throw new ClientGoneError()
    }
    // the writes of this turn leave together, as one write, once its microtasks ran
    if (this.out.write(data)) return undefined
    if (!stream) this.watchStall()
    return this.nextDrain()
  }

  private watchStall (): void {
    if (this.stall !== undefined) return
    this.stall = setTimeout(() => {
      this.stall = undefined
      this.drop(`no read for ${this.limits.stallMs} ms with ${this.socket.writableLength} bytes of replies unread`)
    }, this.limits.stallMs)
    this.stall.unref()
  }

  private clearStall (): void {
    if (this.stall !== undefined) clearTimeout(this.stall)
    this.stall = undefined
  }

  private drop (why: string): void {
    if (this.socket.destroyed) return
    this.log(`control: client dropped: ${why}`)
    this.socket.destroy()
  }
}
