// The face's calls into the host: the control contract (src/control/methods.ts)
// answered by the daemon's own method table, in the daemon's process, without
// the socket. The face runs in that process already (docs/A2A.md); each call
// still goes through the contract as a socket call does: its params through
// the method's fast check or schema, the handler, the result copied as JSON
// (what the face gets is never an object the host keeps), and an error as a
// RemoteError with the same code. Streams (inbox.follow) keep their own socket
// connections: they are long-lived, and hold a connection's attention.
// `give` is a call whose params the caller built for it and hands over (it
// keeps no part of them, and no part is shared with anything it keeps): they
// are not copied on the way in — what the host keeps is still never an object
// the face holds. The result is copied as for every call.
import type { CallName, EventOf, ParamsOf, ResultOf, StreamName } from '../control/methods.js'
import { RemoteError, type ControlClient, type ParamsArg } from '../control/client.js'
import { EncodedArray, FramedAnswer, PagedArray, parseParams, type MethodTable } from '../control/server.js'
import { FRAME_HEAD, renderFollowPage } from '../control/follow-frames.js'
import { DaemonNotRunningError, errorCode, errorMessage, UnknownMethodError } from '../util/errors.js'
import { JsonBytes } from '../util/json-bytes.js'

/** What the face needs of the host: calls, and streams on a connection of their own. */
export interface HostCalls {
  call: <K extends CallName>(method: K, ...params: ParamsArg<K>) => Promise<ResultOf<K>>
  /** a call whose params are handed over (see above); a socket client has none: its params are copied by the wire anyway */
  give?: <K extends CallName>(method: K, params: ParamsOf<K>) => Promise<ResultOf<K>>
  stream: <K extends StreamName>(method: K, params: ParamsOf<K>, onEvent: (event: EventOf<K>) => void) => Promise<void>
  close: () => void
}

/** The JSON text of an array whose items a method encodes itself. */
async function arrayText (result: EncodedArray | PagedArray): Promise<string> {
  const pages = result instanceof EncodedArray ? [result] : result.pages()
  const out = new JsonBytes()
  out.byte(0x5b)
  let first = true
  for await (const page of pages) {
    for (let k = 0; k < page.count; k++) {
      if (!first) out.byte(0x2c)
      first = false
      page.encode(k, out)
    }
  }
  out.byte(0x5d)
  return out.bytes().toString('utf8')
}

/** A result as the socket would deliver it: JSON, parsed again. */
async function asDelivered (result: unknown): Promise<unknown> {
  if (result instanceof EncodedArray || result instanceof PagedArray) return JSON.parse(await arrayText(result))
  // a binary frame (framing "binary") holds the entries a socket client renders from it
  if (result instanceof FramedAnswer) return JSON.parse(JSON.stringify(renderFollowPage(result.frame.subarray(FRAME_HEAD))))
  const text = JSON.stringify(result)
  return text === undefined ? undefined : JSON.parse(text)
}

/** Params as the socket would deliver them (undefined members dropped, a copy). */
function asSent (params: object): unknown {
  return JSON.parse(JSON.stringify(params))
}

export class InProcessControl implements HostCalls {
  private closed = false

  /** `streams`: a socket client for the stream methods. */
  constructor (private readonly methods: MethodTable, private readonly streams: ControlClient) {}

  async call<K extends CallName> (method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
    return await this.invoke(method, asSent(params[0] ?? {}))
  }

  async give<K extends CallName> (method: K, params: ParamsOf<K>): Promise<ResultOf<K>> {
    return await this.invoke(method, params)
  }

  private async invoke<K extends CallName> (method: K, params: unknown): Promise<ResultOf<K>> {
    if (this.closed) throw new DaemonNotRunningError('the in-process control client is closed')
    try {
      const m = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined
      if (m?.call === undefined) throw new UnknownMethodError(`unknown method: ${method}`)
      const result = await m.call(parseParams(m, params) as never)
      return await asDelivered(result) as ResultOf<K>
    } catch (err) {
      throw new RemoteError(errorCode(err), errorMessage(err))
    }
  }

  async stream<K extends StreamName> (method: K, params: ParamsOf<K>, onEvent: (event: EventOf<K>) => void): Promise<void> {
    await this.streams.stream(method, params, onEvent)
  }

  close (): void {
    this.closed = true
    this.streams.close()
  }
}
