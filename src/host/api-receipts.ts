import type { ResultOf } from '../control/methods.js'
import { BROADCAST_TO, type SendParams } from '../control/send-params.js'
import type { Handlers } from '../control/server.js'
import type { QueueResult } from '../delivery/transport.js'
import type { SendRequest } from '../routing/send.js'
import { RECEIPT_STATES as WIRE_STATES, type ReceiptView } from '../control/wire.js'
import { RECEIPT_STATES, STATE_RANK, stateOf, type ReceiptState, type SentReceipt } from '../store/receipts.js'
import { InvalidArgumentError } from '../util/errors.js'
import type { Components } from './components.js'

// Control methods of receipts: `send` with the sender's receipt history
// started (or `no_receipt`), `receipt.get`, and `receipt.wait` (blocks until a
// message reached a state, or a timeout).

type Host = Pick<Components, 'nodes' | 'sender' | 'broadcaster' | 'resolver' | 'receipts' | 'label'>

// the contract's states are the store's (src/control may not import src/store)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const statesAgree: Same<typeof WIRE_STATES, typeof RECEIPT_STATES> = true
void statesAgree

function view (host: Host, r: SentReceipt): ReceiptView {
  return { id: r.id, to: r.to, to_name: host.label(r.to), state: stateOf(r), receipts: r.off !== true, events: r.events.map((e) => ({ ...e, time: new Date(e.at).toISOString() })) }
}

async function receiptOf (host: Host, id: string): Promise<SentReceipt> {
  const r = await host.receipts.history(id)
  if (r === undefined) throw new InvalidArgumentError(`no receipt for message ${id}: this host did not send it`)
  return r
}

/** Whether a history's state is `want` or further along (refused and dead are not). */
function hasReached (r: SentReceipt, want: ReceiptState): boolean {
  const state = stateOf(r)
  return state === want || (STATE_RANK[state] > STATE_RANK[want] && STATE_RANK[state] < STATE_RANK.dead)
}

/** Nothing more will happen to it: refused or dead. */
function ended (r: SentReceipt): boolean {
  return STATE_RANK[stateOf(r)] >= STATE_RANK.dead
}

async function waitFor (host: Host, id: string, want: ReceiptState, timeout: number): Promise<ReceiptView & { reached: boolean }> {
  const first = await receiptOf(host, id)
  const settled = (x: SentReceipt): boolean => hasReached(x, want) || ended(x)
  const r = settled(first)
    ? first
    : await new Promise<SentReceipt>((resolve) => {
      let last = first
      const done = (x: SentReceipt): void => { clearTimeout(timer); host.receipts.store.off('change', onChange); resolve(x) }
      const onChange = (changed: string): void => {
        if (changed !== id) return
        void host.receipts.history(id).then((x) => { if (x !== undefined) { last = x; if (settled(x)) done(x) } }, () => {})
      }
      const timer = setTimeout(() => { void receiptOf(host, id).then(done, () => done(last)) }, timeout)
      host.receipts.store.on('change', onChange)
    })
  return { ...view(host, r), reached: hasReached(r, want) }
}

/** What afterSend reads of a send's request (kept while the packet waits for durability instead of the request and its text). */
export type SendNote = Pick<SendRequest, 'as' | 'to' | 'no_receipt'>

export function noteOf (req: SendRequest): SendNote {
  return { as: req.as, to: req.to, no_receipt: req.no_receipt }
}

/**
 * What `send` answers once the packet is durable: what receipts know of it (nothing stored for a remote send). Also each entry of `send.batch`.
 * Not async: a queued send (every remote one) is answered at once, without a suspended frame per send.
 */
export function afterSend (host: Host, req: SendNote, r: QueueResult): ResultOf<'send'> | Promise<ResultOf<'send'>> {
  const off = req.no_receipt === true
  const from = host.nodes.get(req.as)
  if (from !== undefined && r.state === 'queued') host.receipts.queued({ id: r.id, from: from.record.id, to: req.to, off })
  if (from !== undefined && r.state === 'delivered') return afterLocalSend(host, req, r, from.record.id, off)
  return sendAnswer(r, off ? 'off' : r.state)
}

/**
 * `{ ...r, receipt }` (the reference, sendAnswerReference), written as a
 * literal for the result a queued send has: JSON.stringify took its slow
 * path on the spread's object (~1 µs more per reply, measured in one
 * process). The same fields in the same order (test/host/send-answer.test.ts).
 */
export function sendAnswer (r: QueueResult, receipt: ResultOf<'send'>['receipt']): ResultOf<'send'> {
  return idThenState(r) ? { id: r.id, state: r.state, receipt } : sendAnswerReference(r, receipt)
}

/** Whether the enumerable keys of r are exactly id, then state (what the outbox's queued result holds). */
function idThenState (r: QueueResult): boolean {
  let n = 0
  for (const k in r) {
    if (k !== (n === 0 ? 'id' : n === 1 ? 'state' : '')) return false
    n++
  }
  return n === 2
}

export function sendAnswerReference (r: QueueResult, receipt: ResultOf<'send'>['receipt']): ResultOf<'send'> {
  return { ...r, receipt }
}

/** afterSend of a send delivered into a local inbox: its receipt history starts as delivered. */
async function afterLocalSend (host: Host, req: SendNote, r: QueueResult, from: string, off: boolean): Promise<ResultOf<'send'>> {
  const target = await host.resolver.resolve(req.to).catch(() => undefined) // resolved a moment ago by the send: from the cache
  if (target !== undefined) host.receipts.local({ id: r.id, to: target.id, from, off })
  return sendAnswer(r, off ? 'off' : r.state)
}

/** `send` to "broadcast": the copies, and a receipt history for each one sent. */
async function broadcast (host: Host, req: SendParams, off: boolean): Promise<ResultOf<'send'>> {
  const b = await host.broadcaster.broadcast(req)
  const from = host.nodes.get(req.as)
  for (const m of b.members) {
    if (m.id === undefined || from === undefined || m.state === 'refused') continue
    if (m.state === 'queued') host.receipts.queued({ id: m.id, from: from.record.id, to: m.to_id, off })
    else host.receipts.local({ id: m.id, to: m.to_id, from: from.record.id, off })
  }
  const pending = b.members.some((m) => m.state === 'queued')
  return { ...b, state: pending ? 'queued' : 'delivered', receipt: 'off' }
}

/** The answer of a send once it is durable (one reaction on its promise, no suspended frame). */
function answer (host: Host, note: SendNote, sent: Promise<QueueResult>): Promise<ResultOf<'send'>> {
  return sent.then((r) => afterSend(host, note, r))
}

export function receiptMethods (host: Host): Handlers<'send' | 'receipt.get' | 'receipt.wait'> {
  return {
    /** `send`: the message (no_receipt is a packet field), then what receipts know of it: nothing stored for a remote send. */
    send: {
      // not async: what waits for durability holds the note, not the params and their text
      call: (p) => {
        if (p.to === BROADCAST_TO) return broadcast(host, p, p.no_receipt === true)
        if (p.group !== undefined) return Promise.reject(new InvalidArgumentError(`group names a broadcast's group: pass to "${BROADCAST_TO}" with it`))
        return answer(host, noteOf(p), host.sender.send(p))
      }
    },
    'receipt.get': { call: async (p) => view(host, await receiptOf(host, p.id)) },
    'receipt.wait': { call: async (p) => await waitFor(host, p.id, p.state, p.timeout_ms) }
  }
}
