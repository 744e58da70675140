// `send.batch`: many sends in one control call. Each entry is checked with
// the `send` method's own params check and goes through the same pipeline
// (src/routing/send.ts: sender node, target, packet, authorization), then is
// handed to its transport in entry order; all of them wait for durability
// together (one group commit holds many), and each answers what `send`
// would, or the named error of its own failure (nothing stored for it).
import { MAX_BATCH_CHARS, MAX_BATCH_SENDS, METHODS, type ResultOf } from '../control/methods.js'
import type { ErrorBody } from '../control/protocol.js'
import { parseParams, type Handlers } from '../control/server.js'
import { BatchTooLargeError, errorCode, errorMessage } from '../util/errors.js'
import type { Components } from './components.js'
import { afterSend, noteOf } from './api-receipts.js'

type Host = Pick<Components, 'nodes' | 'sender' | 'broadcaster' | 'resolver' | 'receipts' | 'label'>
type EntryResult = ResultOf<'send.batch'>['results'][number]

function failed (err: unknown): { error: ErrorBody } {
  return { error: { code: errorCode(err), message: errorMessage(err) } }
}

/** Characters of text and payload an entry carries (what MAX_BATCH_CHARS bounds). */
function charsOf (entry: unknown): number {
  if (typeof entry !== 'object' || entry === null) return 0
  const { text, payload } = entry as { text?: unknown, payload?: unknown }
  return (typeof text === 'string' ? text.length : 0) + (payload === undefined ? 0 : JSON.stringify(payload)?.length ?? 0)
}

/** Refuse the whole call, before anything is sent, when it is over the bounds. */
function checkBounds (sends: unknown[]): void {
  if (sends.length > MAX_BATCH_SENDS) throw new BatchTooLargeError(`a send batch holds at most ${MAX_BATCH_SENDS} sends (got ${sends.length}); nothing was sent`)
  let chars = 0
  for (const s of sends) chars += charsOf(s)
  if (chars > MAX_BATCH_CHARS) throw new BatchTooLargeError(`a send batch holds at most ${MAX_BATCH_CHARS} characters of text and payload (got ${chars}); nothing was sent`)
}

/** One entry up to its transport; the promise of its result or error (wrapped: an awaited promise of a promise would wait for it). */
async function start (host: Host, entry: unknown): Promise<{ done: Promise<EntryResult> }> {
  try {
    const req = parseParams(METHODS.send, entry)
    const prepared = await host.sender.prepare(req)
    const note = noteOf(req) // what waits for durability holds this, not the entry and its text
    // handed to the transport now, before the next entry is prepared: entry order = store order
    return { done: host.sender.deliver(prepared).then((r) => afterSend(host, note, r), failed) }
  } catch (err) {
    return { done: Promise.resolve(failed(err)) }
  }
}

export async function sendBatch (host: Host, sends: unknown[]): Promise<EntryResult[]> {
  checkBounds(sends)
  const pending: Array<Promise<EntryResult>> = []
  for (const entry of sends) pending.push((await start(host, entry)).done)
  // returned, not awaited: this frame (and the entries it holds) is done once all are handed over
  return Promise.all(pending)
}

export function sendBatchMethods (host: Host): Handlers<'send.batch'> {
  return { 'send.batch': { call: (p) => sendBatch(host, p.sends).then((results) => ({ results })) } }
}
