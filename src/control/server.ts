import { chmodSync, unlinkSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { ZodError, type ZodType } from 'zod'
import { errorCode, errorMessage, InvalidArgumentError, UnknownMethodError } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { JsonBytes } from '../util/json-bytes.js'
import { METHODS, type CallName, type MethodName, type ParsedParams, type ResultOf, type StreamName } from './methods.js'
import { CONTROL_LIMITS, Connection, type ConnectionLimits } from './connection.js'
import { MAX_LINE_BYTES, type Reply, type Request } from './protocol.js'
import { BINARY_METHODS, decodeRequestFrame, FRAMING_METHOD, type FramingResult, type RequestFrame } from './request-frame.js'
import { RequestReader } from './request-reader.js'
import { replyLine } from './reply-line.js'
import { FRAME_HEAD, FRAME_MARK } from './follow-frames.js'
import { TRACING, mark } from '../util/trace.js'


/** A stream handler gets an emit function and an abort signal (the client went away). */
export interface StreamSink {
  emit: (event: unknown) => Promise<void>
  /** several events in one socket write; resolves when the socket has room again */
  emitMany?: (events: unknown[]) => Promise<void>
  /**
   * The event lines of `count` events written by `encode` (the JSON text of
   * event k into `out`; `sizeHint`: about how many bytes they take), framed
   * for this stream but not sent: a stream can frame its next page while the
   * previous one drains
   */
  frame?: (count: number, encode: EncodeItem, sizeHint?: number) => Uint8Array | undefined
  /** send lines made by `frame` in one socket write; resolves when the socket has room again */
  emitFramed?: (lines: Uint8Array | undefined) => Promise<void>
  /**
   * send one binary frame (follow-frames.ts) whose body starts at FRAME_HEAD of
   * `frame` (the head is filled in here), for a stream whose client asked for
   * binary framing; resolves when the socket has room again
   */
  emitBinary?: (frame: Uint8Array) => Promise<void>
  signal: AbortSignal
}

/** Writes the JSON text of item k (exactly one JSON value) into `out`. */
export type EncodeItem = (k: number, out: JsonBytes) => void

/**
 * A call result that is a JSON array whose items the method encodes itself
 * (straight into the reply bytes, see JsonBytes); the reply is the same as
 * for an array of the values those texts are the JSON of.
 */
export class EncodedArray<T = unknown> {
  /** the type of the items the texts are the JSON of (types only) */
  declare readonly item?: T
  constructor (readonly count: number, readonly encode: EncodeItem, readonly sizeHint = 0) {}
}

export interface Method<P> {
  params: ZodType<P>
  /**
   * Optional hand-written check for a hot method: the parsed params when they
   * are certainly valid (the same value `params.parse` gives), else undefined
   * and `params` decides (and words the error)
   */
  fast?: (raw: unknown) => P | undefined
  call?: (params: P) => Promise<unknown>
  stream?: (params: P, sink: StreamSink) => Promise<void>
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type MethodTable = Record<string, Method<never>>

export function method<P> (m: Method<P>): Method<never> {
  return m as unknown as Method<never>
}

/**
 * A call result that is a JSON array produced in pages (each an EncodedArray),
 * started only once the connection's output is free and paced by the client's
 * reading: a large reply is never rendered whole. `pages` runs when the reply
 * is written, so the work it does (a store read) waits for that too.
 */
export class PagedArray<T = unknown> {
  /** the type of the items (types only) */
  declare readonly item?: T
  constructor (readonly pages: () => AsyncIterable<EncodedArray<T>>) {}
}

/**
 * A call result sent as one binary frame (follow-frames.ts) whose body starts
 * at FRAME_HEAD of `frame`, then the call's `end` line: for a client that
 * asked for binary framing (ControlClient.callFrame)
 */
export class FramedAnswer<T = unknown> {
  /** the type of the items the frame holds (types only) */
  declare readonly item?: T
  /** `written`, when given, gets the frame's write (resolved once the socket took it, or rejected): its buffer may then be reused */
  constructor (readonly frame: Uint8Array, readonly written?: (write: Promise<void>) => void) {}
}

/** A result, or for an array result the same array encoded item by item (at once or in pages), or framed. */
export type Answer<R> = R | (R extends Array<infer E> ? EncodedArray<E> | PagedArray<E> | FramedAnswer<E> : never)

/** The daemon's implementation of one contract method (its params come from METHODS). */
export type Handler<K extends MethodName> = K extends StreamName
  ? { stream: (params: ParsedParams<K>, sink: StreamSink) => Promise<void> }
  : K extends CallName ? { call: (params: ParsedParams<K>) => Promise<Answer<ResultOf<K>>> } : never

/** Implementations of the contract methods K. */
export type Handlers<K extends MethodName = MethodName> = { [N in K]: Handler<N> }

/** The method table of the whole contract: each handler with the contract's params (and fast check). */
export function implement (handlers: Handlers): MethodTable {
  const table: MethodTable = {}
  for (const name of Object.keys(METHODS) as MethodName[]) {
    table[name] = method<unknown>({ ...METHODS[name], ...handlers[name] } as Method<unknown>)
  }
  return table
}

/**
 * Remove the socket file (a stale one after kill -9) without stat-ing it. fs.rmSync
 * lstat()s the path first, and Node 20's fs.realpathSync, which the ESM resolver calls
 * with a cache, reads the type of the last stat'ed file from a buffer shared by every
 * sync stat: after a socket's, it stops resolving symlinks. Modules imported next
 * through a symlinked directory (node_modules linked in, as pnpm and `npm link` do)
 * then get a second URL, and a CommonJS package seen under both loads as an empty
 * object: the restarted daemon died on "express.json is not a function" while starting
 * its A2A face. unlink() stats nothing.
 */
function removeSocketFile (path: string): void {
  try {
    unlinkSync(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

/** The daemon side of the control socket. */
export class ControlServer {
  private server?: Server
  private readonly sockets = new Set<Socket>()
  /** requests being handled: stop waits for them, so no handler reads a store that has closed under it */
  private running = 0
  /** ends stop's wait for the running requests, once there are none */
  private drained?: () => void
  /** a request's handling settled (one bound function, no closure per request) */
  private readonly finished = (): void => { if (--this.running === 0) this.drained?.() }
  private readonly limits: ConnectionLimits

  constructor (private readonly path: string, private readonly methods: MethodTable, private readonly log: Logger, limits: Partial<ConnectionLimits> = {}) {
    this.limits = { ...CONTROL_LIMITS, ...limits }
  }

  async start (): Promise<void> {
    removeSocketFile(this.path)
    const server = createServer((socket) => this.accept(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.path, () => resolve())
    })
    chmodSync(this.path, 0o600)
    this.server = server
  }

  async stop (): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
    await this.idleWithin(STOP_WAIT_MS)
    removeSocketFile(this.path)
  }

  private accept (socket: Socket): void {
    this.sockets.add(socket)
    // counted while it runs: the connection settles each request once (finished)
    const run = (req: string | RequestFrame): Promise<void> => { this.running++; return this.dispatch(conn, req) }
    const conn: Connection = new Connection(socket, this.limits, this.log, run, this.finished)
    // a frame in the reader's scratch is read as it starts, or copied by the connection if it must wait
    const reader = new RequestReader((line) => conn.request(line), (frame, transient) => conn.request(frame, transient), MAX_LINE_BYTES, true)
    socket.on('data', (chunk: Buffer) => {
      try { reader.push(chunk) } catch (err) { this.log(`control: ${errorMessage(err)}`); socket.destroy() }
    })
    socket.on('close', () => { this.sockets.delete(socket) })
    socket.on('error', () => {})
  }

  /** Wait until no request runs, or the bound passed. */
  private async idleWithin (ms: number): Promise<void> {
    if (this.running === 0) return
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => { this.drained = resolve; timer = setTimeout(resolve, ms) })
    clearTimeout(timer)
    this.drained = undefined
  }

  /**
   * Parse a request and start its handler. Not async: the frame that waits
   * for a call's result (answer) holds its id and method name, not the
   * request's text or params (a send's text would otherwise live, and be
   * copied by the GC, until the packet is durable).
   */
  private dispatch (conn: Connection, request: string | RequestFrame): Promise<void> {
    let id = typeof request === 'string' ? 0 : request.id
    try {
      // a binary frame is read as the request the same JSON line parses to (request-frame.ts)
      const req = typeof request === 'string' ? parseRequest(request) : decodeRequestFrame(request)
      id = req.id
      if (TRACING) mark(`ctl.in.${req.method}`)
      if (req.method === FRAMING_METHOD) return this.answer(conn, id, req.method, Promise.resolve(FRAMING))
      // own entries only: `constructor`, `__proto__`, `toString`, … are no methods
      const m = Object.hasOwn(this.methods, req.method) ? this.methods[req.method] : undefined
      if (m === undefined) throw new UnknownMethodError(`unknown method: ${req.method}`)
      const params = parseParams(m, req.params)
      if (m.stream !== undefined) return this.runStream(conn, id, m, params).catch(async (err) => await this.fail(conn, id, err))
      if (m.call !== undefined) return this.answer(conn, id, req.method, m.call(params))
      return Promise.resolve()
    } catch (err) {
      return this.fail(conn, id, err)
    }
  }

  /**
   * Write a call's result once it is there (or its error). Not async: a
   * plain result (every `send`) costs one reaction on its promise, not a
   * suspended frame and its awaits.
   */
  private answer (conn: Connection, id: number, method: string, pending: Promise<unknown>): Promise<void> {
    return pending.then((result) => this.reply(conn, id, method, result), (err) => this.fail(conn, id, err))
  }

  /** Write a result: a plain one at once (undefined once the socket took it), the others through answerOther. */
  private reply (conn: Connection, id: number, method: string, result: unknown): Promise<void> | undefined {
    if (result instanceof PagedArray || result instanceof FramedAnswer || result instanceof EncodedArray) return this.answerOther(conn, id, method, result)
    let written: Promise<void> | undefined
    try {
      written = conn.reply(replyLine(id, result))
    } catch (err) {
      return this.fail(conn, id, err)
    }
    if (written === undefined) {
      if (TRACING) mark(`ctl.out.${method}`)
      return undefined
    }
    return written.then(() => { if (TRACING) mark(`ctl.out.${method}`) }, (err) => this.fail(conn, id, err))
  }

  /** Write a paged, framed or encoded array result (or the error of its writing). */
  private async answerOther (conn: Connection, id: number, method: string, result: PagedArray | FramedAnswer | EncodedArray): Promise<void> {
    try {
      if (result instanceof PagedArray) await writePaged(conn, id, result)
      else if (result instanceof FramedAnswer) {
        // the frame, then the end line that completes the call (other replies may go between)
        const write = conn.write(binaryFrame(id, result.frame))
        result.written?.(write)
        await write
        await conn.write(JSON.stringify({ id, end: true } satisfies Reply) + '\n')
      } else await conn.write(encodeArrayReply(id, result))
      if (TRACING) mark(`ctl.out.${method}`)
    } catch (err) {
      await this.fail(conn, id, err)
    }
  }

  private async fail (conn: Connection, id: number, err: unknown): Promise<void> {
    if (conn.socket.destroyed) return
    await conn.write(JSON.stringify({ id, error: { code: errorCode(err), message: errorMessage(err) } } satisfies Reply) + '\n').catch(() => {})
  }

  private async runStream (conn: Connection, id: number, m: Method<never>, params: never): Promise<void> {
    const signal = conn.abort.signal
    const line = (reply: Reply): string => JSON.stringify(reply) + '\n'
    const emit = async (event: unknown): Promise<void> => { await conn.write(line({ id, event }), true) }
    const emitMany = async (events: unknown[]): Promise<void> => { await conn.write(events.length === 0 ? undefined : events.map((event) => line({ id, event })).join(''), true) }
    const frame = (count: number, encode: EncodeItem, sizeHint?: number): Uint8Array | undefined => encodeEvents(id, count, encode, sizeHint)
    const emitFramed = async (lines: Uint8Array | undefined): Promise<void> => { await conn.write(lines, true) }
    const emitBinary = async (bytes: Uint8Array): Promise<void> => { await conn.write(binaryFrame(id, bytes), true) }
    await m.stream?.(params, { emit, emitMany, frame, emitFramed, emitBinary, signal })
    if (!signal.aborted) await conn.write(line({ id, end: true }))
  }
}

/** What FRAMING_METHOD answers: this server reads binary request frames of BINARY_METHODS too. */
const FRAMING: FramingResult = { requests: ['ndjson', 'binary'], binary_methods: [...BINARY_METHODS] }

/** how long stop waits for the handlers of closed connections to return (a stream ends on its abort signal) */
const STOP_WAIT_MS = 5 * SECOND

function parseRequest (line: string): Request {
  let v: unknown
  try {
    v = JSON.parse(line)
  } catch {
    throw new InvalidArgumentError('control request is not JSON')
  }
  const r = v as Partial<Request>
  if (typeof v !== 'object' || v === null || typeof r.id !== 'number' || typeof r.method !== 'string') {
    throw new InvalidArgumentError('control request needs a numeric id and a method')
  }
  return { id: r.id, method: r.method, params: r.params }
}

/** A method's params as its handler gets them: the fast check, else the schema (an InvalidArgumentError words its first issue). */
export function parseParams<P> (m: Pick<Method<P>, 'params' | 'fast'>, raw: unknown): P {
  const quick = m.fast?.(raw ?? {})
  if (quick !== undefined) return quick
  try {
    return (m.params as ZodType<unknown>).parse(raw ?? {}) as P
  } catch (err) {
    if (err instanceof ZodError) {
      const first = err.issues[0]
      throw new InvalidArgumentError(`invalid argument ${first.path.join('.') || '(params)'}: ${first.message}`)
    }
    throw err
  }
}

/** Fill in the head of a binary frame (marker, request id, body length) in front of its body. */
function binaryFrame (id: number, frame: Uint8Array): Uint8Array {
  const view = new DataView(frame.buffer, frame.byteOffset, FRAME_HEAD)
  view.setUint8(0, FRAME_MARK)
  view.setUint32(1, id)
  view.setUint32(5, frame.byteLength - FRAME_HEAD)
  return frame
}

/** Event lines {"id":N,"event":<item k>} for k < count, as bytes. */
function encodeEvents (id: number, count: number, encode: EncodeItem, sizeHint = count * 512): Buffer | undefined {
  if (count === 0) return undefined
  const out = new JsonBytes(sizeHint + count * 32)
  const head = `{"id":${JSON.stringify(id)},"event":`
  for (let k = 0; k < count; k++) {
    out.ascii(head)
    encode(k, out)
    out.ascii('}\n')
  }
  return out.bytes()
}

/** The reply line {"id":N,"result":[<item 0>,<item 1>,...]} as bytes. */
function encodeArrayReply (id: number, result: EncodedArray): Buffer {
  const out = new JsonBytes(result.sizeHint > 0 ? result.sizeHint : result.count * 512 + 64)
  out.ascii(`{"id":${JSON.stringify(id)},"result":[`)
  for (let k = 0; k < result.count; k++) {
    if (k > 0) out.byte(0x2c)
    result.encode(k, out)
  }
  out.ascii(']}\n')
  return out.bytes()
}

/** The reply line {"id":N,"result":[...]} of a paged array, page by page, each written once the previous one drained. */
async function writePaged (conn: Connection, id: number, result: PagedArray): Promise<void> {
  await conn.whole(async (put) => {
    await put(`{"id":${JSON.stringify(id)},"result":[`)
    let first = true
    for await (const page of result.pages()) {
      if (page.count === 0) continue
      const out = new JsonBytes(page.sizeHint > 0 ? page.sizeHint : page.count * 512 + 16)
      for (let k = 0; k < page.count; k++) {
        if (!first || k > 0) out.byte(0x2c)
        page.encode(k, out)
      }
      first = false
      await put(out.bytes())
    }
    await put(']}\n')
  })
}
