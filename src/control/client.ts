import { connect, type OnReadOpts, type Socket } from 'node:net'
import { AmeshError, DaemonNotRunningError, MalformedFrameError } from '../util/errors.js'
import { FRAME_HEAD, MAX_FRAME_BYTES } from './frame-head.js'
import { LineFrameSplitter } from './line-frame-splitter.js'
import type { CallName, EventOf, MethodName, ParamsOf, ResultOf, StreamName } from './methods.js'
import type { Reply } from './protocol.js'
import { BINARY_METHODS, encodeRequestFrame, FRAMING_METHOD, type FramingResult } from './request-frame.js'
import { TurnWriter } from './coalesce.js'

/** The params argument of a method: optional when the method takes none. */
export type ParamsArg<K extends MethodName> = {} extends ParamsOf<K> ? [params?: ParamsOf<K>] : [params: ParamsOf<K>]

interface Pending {
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
  onEvent?: (event: unknown) => void
  onFrame?: (body: Uint8Array) => void
}

/** Splits the daemon's replies: JSON lines and binary frames (follow-frames.ts), each bounded in bytes. */
export class ReplyReader extends LineFrameSplitter {
  constructor (onLine: (line: string) => void, onFrame: (id: number, body: Uint8Array) => void, max = MAX_FRAME_BYTES) {
    super(onLine, onFrame, max)
  }

  protected frameTooLong (len: number): Error {
    return new MalformedFrameError(`control frame of ${len} bytes (at most ${this.max})`)
  }

  protected bound (): void {
    if (this.held > this.max + FRAME_HEAD) throw new MalformedFrameError(`control reply longer than ${this.max} bytes`)
  }
}

/** bytes of a new chunk the socket reads into when no large frame is being received (Node's own read size) */
const READ_CHUNK = 64 * 1024

/**
 * The socket's reads for a reply reader: into the rest of the large frame
 * being received when there is one (its bytes land in place, LineFrameSplitter
 * readInto), else into one reused chunk whose read bytes are copied out and
 * pushed as a 'data' chunk would be (a new 64 KiB buffer per read would be
 * held whole by the few bytes of a reply line).
 */
function readInto (reader: ReplyReader): OnReadOpts {
  let into: Buffer | undefined
  const spare = Buffer.allocUnsafe(READ_CHUNK)
  return {
    buffer: () => (into = reader.readInto()) ?? spare,
    callback: (n: number, buf: Uint8Array): boolean => {
      if (buf === into) reader.filled(n)
      else reader.push(Buffer.from(buf.subarray(0, n)))
      return true
    }
  }
}

/** An error returned by the daemon, carrying its stable code. */
export class RemoteError extends AmeshError {
  constructor (code: string, message: string) {
    super(code, message)
    this.name = 'RemoteError'
  }
}

/** The client side of the control socket (used by the CLI and the MCP process). */
export class ControlClient {
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private closed = false
  /**
   * Whether the daemon reads binary request frames (request-frame.ts): asked
   * once per connection, before its first send; until the answer came every
   * request waits for it, so requests still leave in call order
   */
  private framing?: Promise<void>
  /** the daemon answered the framing question (or could not) */
  private framingKnown = false
  /** requests waiting for that answer, to be written in call order */
  private waiting = 0
  private binarySends = false
  /** every request goes through it: one socket write per turn */
  private readonly out: TurnWriter

  private constructor (private readonly socket: Socket) {
    this.out = new TurnWriter(socket)
    socket.on('close', () => this.onClose())
    socket.on('error', () => {})
  }

  static async connect (path: string): Promise<ControlClient> {
    let client: ControlClient | undefined
    // replies are read only once the client exists: none come before its first request
    const reader = new ReplyReader((line) => client?.onLine(line), (id, body) => client?.pending.get(id)?.onFrame?.(body))
    const socket = connect({ path, onread: readInto(reader) })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve())
      socket.once('error', (err: NodeJS.ErrnoException) => {
        reject(new DaemonNotRunningError(`no amesh daemon answers on ${path} (${err.code ?? err.message})`, { cause: err }))
      })
    })
    client = new ControlClient(socket)
    return client
  }

  private onLine (line: string): void {
    const reply = JSON.parse(line) as Reply
    const p = this.pending.get(reply.id)
    if (p === undefined) return
    if ('event' in reply) { p.onEvent?.(reply.event); return }
    this.pending.delete(reply.id)
    if ('error' in reply) p.reject(new RemoteError(reply.error.code, reply.error.message))
    else if ('end' in reply) p.resolve(undefined)
    else p.resolve(reply.result)
  }

  private onClose (): void {
    this.closed = true
    for (const p of this.pending.values()) p.reject(new DaemonNotRunningError('the amesh daemon closed the control connection'))
    this.pending.clear()
  }

  /**
   * Call a contract method (src/control/methods.ts): its params and result are typed by its name.
   * Not async: the call's promise is the request's own, no frame and promise more per call (T2's client makes 512 at a time).
   */
  call<K extends CallName> (method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
    return this.send(method, params[0] ?? {}) as Promise<ResultOf<K>>
  }

  /** Run a contract streaming method; resolves when the stream ends. */
  async stream<K extends StreamName> (method: K, params: ParamsOf<K>, onEvent: (event: EventOf<K>) => void): Promise<void> {
    await this.send(method, params, onEvent as (event: unknown) => void)
  }

  /**
   * Run a streaming method with binary framing (`framing: "binary"` is added
   * to the params): `onFrame` gets each frame's body (a view, valid during
   * the call); resolves when the stream ends.
   */
  async frames<K extends StreamName> (method: K, params: ParamsOf<K>, onFrame: (body: Uint8Array) => void): Promise<void> {
    await this.send(method, { ...params, framing: 'binary' }, undefined, onFrame)
  }

  /**
   * Call a method with binary framing (`framing: "binary"` is added to the
   * params): resolves with the body of the one frame it answers with (a
   * view of the bytes received for it: the reply reader never reuses them).
   */
  async callFrame<K extends CallName> (method: K, params: ParamsOf<K>): Promise<Uint8Array> {
    let body: Uint8Array | undefined
    await this.send(method, { ...params, framing: 'binary' }, undefined, (b) => { body = b })
    if (body === undefined) throw new MalformedFrameError(`${method} answered without its binary frame`)
    return body
  }

  /** Call any method by name, untyped (a server with its own table, or a deliberately wrong request). */
  async request<T = unknown> (method: string, params: object = {}): Promise<T> {
    return await this.send(method, params) as T
  }

  /** Run any streaming method by name, untyped. */
  async requestStream (method: string, params: object, onEvent: (event: unknown) => void): Promise<void> {
    await this.send(method, params, onEvent)
  }

  /**
   * Write a request now, in the caller's turn, unless requests wait for the
   * framing answer (then after them, in call order). Not async: a request
   * made before synchronous work (a pager asking for its next page, then
   * rendering the one it holds) leaves before that work, not after it, so
   * the daemon reads the next page while the caller renders this one.
   */
  private send (method: string, params: object, onEvent?: (event: unknown) => void, onFrame?: (body: Uint8Array) => void): Promise<unknown> {
    if (this.framing === undefined && BINARY_METHODS.includes(method)) this.framing = this.askFraming()
    if (this.framing === undefined || (this.framingKnown && this.waiting === 0)) return this.write(method, params, onEvent, onFrame)
    this.waiting++
    // chained on the one answer promise: reactions run in the order they were added
    return this.framing.then(async () => {
      this.waiting--
      return await this.write(method, params, onEvent, onFrame)
    }, (err: unknown) => {
      this.waiting--
      throw err
    })
  }

  /** Write one request (a binary frame for a send once the daemon reads them, else a JSON line); resolves with its answer. */
  private write (method: string, params: object, onEvent?: (event: unknown) => void, onFrame?: (body: Uint8Array) => void): Promise<unknown> {
    if (this.closed) return Promise.reject(new DaemonNotRunningError('the control connection is closed'))
    const id = this.nextId++
    // (not async: the request's promise is the answer's, a throw below rejects it)
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent, onFrame })
      const frame = this.binarySends ? encodeRequestFrame(id, method, params) : undefined
      // requests made in one turn (sends issued as a batch of replies arrives) leave in one write
      // (a request frame is this call's own buffer: handed over)
      this.out.write(frame ?? JSON.stringify({ id, method, params }) + '\n', true)
    })
  }

  /** Ask the daemon which request framings it reads (one that does not know the question answers UNKNOWN_METHOD: JSON lines only). */
  private async askFraming (): Promise<void> {
    try {
      const r = await this.write(FRAMING_METHOD, {}) as Partial<FramingResult>
      this.binarySends = Array.isArray(r.requests) && r.requests.includes('binary')
    } catch (err) {
      if (!(err instanceof RemoteError)) throw err
    } finally {
      this.framingKnown = true
    }
  }

  close (): void {
    this.socket.end()
    this.socket.destroy()
  }
}
