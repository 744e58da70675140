// The one bound on what a response holds unread (SSE_MAX_BUFFERED): a client
// that stops reading a stream is cut there, so it costs bounded memory. Every
// response of the face gets it: the JSON-RPC ones served on node:http and the
// express ones alike; the resume extension's replay also counts what it holds
// back unwritten.
import type { ServerResponse } from 'node:http'
import { SSE_MAX_BUFFERED } from './constants.js'

/** True when the response's unread output plus `held` bytes not yet written pass the bound. */
export function overBound (res: ServerResponse, held = 0): boolean {
  return res.writableLength + held > SSE_MAX_BUFFERED
}

/** Make every write of this response cut it once its unread output passes the bound. */
export function boundWrites (res: ServerResponse): void {
  const write = res.write.bind(res) as (...a: unknown[]) => boolean
  res.write = ((...args: unknown[]) => {
    const ok = write(...args)
    if (overBound(res)) res.destroy()
    return ok
  }) as typeof res.write
}
