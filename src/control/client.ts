import { connect, type Socket } from 'node:net'
import { AmeshError, DaemonNotRunningError } from '../util/errors.js'
import type { CallName, EventOf, MethodName, ParamsOf, ResultOf, StreamName } from './methods.js'
import { LineSplitter, type Reply } from './protocol.js'

/** The params argument of a method: optional when the method takes none. */
export type ParamsArg<K extends MethodName> = {} extends ParamsOf<K> ? [params?: ParamsOf<K>] : [params: ParamsOf<K>]

interface Pending {
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
  onEvent?: (event: unknown) => void
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

  private constructor (private readonly socket: Socket) {
    socket.setEncoding('utf8')
    const splitter = new LineSplitter((line) => this.onLine(line))
    socket.on('data', (chunk: string) => splitter.push(chunk))
    socket.on('close', () => this.onClose())
    socket.on('error', () => {})
  }

  static async connect (path: string): Promise<ControlClient> {
    const socket = connect(path)
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve())
      socket.once('error', (err: NodeJS.ErrnoException) => {
        reject(new DaemonNotRunningError(`no amesh daemon answers on ${path} (${err.code ?? err.message})`, { cause: err }))
      })
    })
    return new ControlClient(socket)
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

  /** Call a contract method (src/control/methods.ts): its params and result are typed by its name. */
  async call<K extends CallName> (method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
    return await this.send(method, params[0] ?? {}) as ResultOf<K>
  }

  /** Run a contract streaming method; resolves when the stream ends. */
  async stream<K extends StreamName> (method: K, params: ParamsOf<K>, onEvent: (event: EventOf<K>) => void): Promise<void> {
    await this.send(method, params, onEvent as (event: unknown) => void)
  }

  /** Call any method by name, untyped (a server with its own table, or a deliberately wrong request). */
  async request<T = unknown> (method: string, params: object = {}): Promise<T> {
    return await this.send(method, params) as T
  }

  /** Run any streaming method by name, untyped. */
  async requestStream (method: string, params: object, onEvent: (event: unknown) => void): Promise<void> {
    await this.send(method, params, onEvent)
  }

  private async send (method: string, params: object, onEvent?: (event: unknown) => void): Promise<unknown> {
    if (this.closed) throw new DaemonNotRunningError('the control connection is closed')
    const id = this.nextId++
    return await new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent })
      this.socket.write(JSON.stringify({ id, method, params }) + '\n')
    })
  }

  close (): void {
    this.socket.end()
    this.socket.destroy()
  }
}
