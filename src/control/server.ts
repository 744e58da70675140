import { chmodSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { ZodError, type ZodType } from 'zod'
import { errorCode, errorMessage, InvalidArgumentError, UnknownMethodError } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { JsonBytes } from '../util/json-bytes.js'
import { LineSplitter, type Reply, type Request } from './protocol.js'

/** requests of one control connection in progress before the daemon stops reading it */
export const MAX_PENDING = 1024
const RESUME_BELOW = MAX_PENDING / 2

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
  signal: AbortSignal
}

/** Writes the JSON text of item k (exactly one JSON value) into `out`. */
export type EncodeItem = (k: number, out: JsonBytes) => void

/**
 * A call result that is a JSON array whose items the method encodes itself
 * (straight into the reply bytes, see JsonBytes); the reply is the same as
 * for an array of the values those texts are the JSON of.
 */
export class EncodedArray {
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

/** The daemon side of the control socket. */
export class ControlServer {
  private server?: Server
  private readonly sockets = new Set<Socket>()

  constructor (private readonly path: string, private readonly methods: MethodTable, private readonly log: Logger) {}

  async start (): Promise<void> {
    rmSync(this.path, { force: true })
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
    rmSync(this.path, { force: true })
  }

  private accept (socket: Socket): void {
    this.sockets.add(socket)
    const abort = new AbortController()
    socket.setEncoding('utf8')
    // a client that pipelines requests faster than they complete is not read
    // further while MAX_PENDING of its requests are in progress (bounded memory)
    let pending = 0
    const done = (): void => {
      pending--
      if (pending < RESUME_BELOW && socket.isPaused()) socket.resume()
    }
    const splitter = new LineSplitter((line) => {
      pending++
      if (pending >= MAX_PENDING && !socket.isPaused()) socket.pause()
      void this.dispatch(socket, line, abort.signal).finally(done)
    })
    socket.on('data', (chunk: string) => {
      try { splitter.push(chunk) } catch (err) { this.log(`control: ${errorMessage(err)}`); socket.destroy() }
    })
    socket.on('close', () => { abort.abort(); this.sockets.delete(socket) })
    socket.on('error', () => {})
  }

  private async dispatch (socket: Socket, line: string, signal: AbortSignal): Promise<void> {
    let id = 0
    try {
      const req = parseRequest(line)
      id = req.id
      const m = this.methods[req.method]
      if (m === undefined) throw new UnknownMethodError(`unknown method: ${req.method}`)
      const params = parseParams(m, req.params)
      if (m.stream !== undefined) {
        await this.runStream(socket, id, m, params, signal)
      } else if (m.call !== undefined) {
        const result = await m.call(params)
        if (result instanceof EncodedArray) await writeBytes(socket, encodeArrayReply(id, result))
        else await write(socket, { id, result })
      }
    } catch (err) {
      await write(socket, { id, error: { code: errorCode(err), message: errorMessage(err) } }).catch(() => {})
    }
  }

  private async runStream (socket: Socket, id: number, m: Method<never>, params: never, signal: AbortSignal): Promise<void> {
    const emit = async (event: unknown): Promise<void> => { await write(socket, { id, event }) }
    const emitMany = async (events: unknown[]): Promise<void> => { await writeLines(socket, events.map((event) => JSON.stringify({ id, event }))) }
    const frame = (count: number, encode: EncodeItem, sizeHint?: number): Uint8Array | undefined => encodeEvents(id, count, encode, sizeHint)
    const emitFramed = async (lines: Uint8Array | undefined): Promise<void> => { await writeBytes(socket, lines) }
    await m.stream?.(params, { emit, emitMany, frame, emitFramed, signal })
    if (!signal.aborted) await write(socket, { id, end: true })
  }
}

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

function parseParams (m: Method<never>, raw: unknown): never {
  const quick = m.fast?.(raw ?? {})
  if (quick !== undefined) return quick
  try {
    return (m.params as ZodType<unknown>).parse(raw ?? {}) as never
  } catch (err) {
    if (err instanceof ZodError) {
      const first = err.issues[0]
      throw new InvalidArgumentError(`invalid argument ${first.path.join('.') || '(params)'}: ${first.message}`)
    }
    throw err
  }
}

/** Write one reply line; resolves when the socket has room again (backpressure). */
async function write (socket: Socket, reply: Reply): Promise<void> {
  await writeBytes(socket, JSON.stringify(reply) + '\n')
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

/** Write encoded reply lines in one socket write; resolves when the socket has room again. */
async function writeLines (socket: Socket, lines: string[]): Promise<void> {
  await writeBytes(socket, lines.length === 0 ? undefined : lines.join('\n') + '\n')
}

/** Write whole reply lines; resolves when the socket has room again. */
async function writeBytes (socket: Socket, data: string | Uint8Array | undefined): Promise<void> {
  if (socket.destroyed) throw new Error('control client went away')
  if (data === undefined) return
  coalesce(socket)
  const ok = socket.write(data)
  if (ok) return
  await new Promise<void>((resolve, reject) => {
    const onDrain = (): void => { socket.off('close', onClose); resolve() }
    const onClose = (): void => { socket.off('drain', onDrain); reject(new Error('control client went away')) }
    socket.once('drain', onDrain)
    socket.once('close', onClose)
  })
}

/** sockets written to in this turn of the event loop */
const writtenThisTurn = new WeakSet<Socket>()

/**
 * Replies written in the same turn (a durability batch completes hundreds of
 * sends at once) leave in one writev instead of one syscall each. The first
 * write of a turn goes out at once (a lone reply or event waits for nothing);
 * later ones cork the socket, and it is uncorked once the turn's callbacks
 * and microtasks have run, before any I/O.
 */
function coalesce (socket: Socket): void {
  if (socket.writableCorked > 0) return
  if (!writtenThisTurn.has(socket)) {
    writtenThisTurn.add(socket)
    process.nextTick(endTurn, socket)
    return
  }
  socket.cork()
}

function endTurn (socket: Socket): void {
  writtenThisTurn.delete(socket)
  if (socket.writableCorked > 0) socket.uncork()
}
