import { z } from 'zod'
import { method, type MethodTable } from '../control/server.js'
import { checkSendParams, sendSchema, type SendParams } from '../control/send-params.js'
import { RECEIPT_STATES, STATE_RANK, stateOf, type ReceiptState, type SentReceipt } from '../store/receipts.js'
import { InvalidArgumentError } from '../util/errors.js'
import type { Host } from './host.js'
import { resolveTarget } from './resolve.js'
import { sendMessage } from './send.js'

// Control methods of receipts: `send` with the sender's receipt history
// started (or `no_receipt`), `receipt.get`, and `receipt.wait` (blocks until a
// message reached a state, or a timeout).

const msgId = z.string().min(1).max(256)
/** the longest a `receipt.wait` call blocks, ms */
const MAX_WAIT = 24 * 60 * 60 * 1000

const receiptSendSchema = sendSchema.extend({ no_receipt: z.boolean().optional() }).strict()
type ReceiptSend = SendParams & { no_receipt?: boolean }

function fastSend (raw: unknown): ReceiptSend | undefined {
  if (typeof raw !== 'object' || raw === null || !('no_receipt' in raw)) return checkSendParams(raw)
  const { no_receipt: off, ...rest } = raw as Record<string, unknown>
  if (off !== undefined && typeof off !== 'boolean') return undefined
  const p = checkSendParams(rest)
  return p === undefined ? undefined : { ...p, ...(off === undefined ? {} : { no_receipt: off }) }
}

/** `send`: the message, then its receipt history (queued, or delivered for a local node). */
async function sendWithReceipt (host: Host, p: ReceiptSend): Promise<Record<string, unknown>> {
  const { no_receipt: off, ...req } = p
  const r = await sendMessage(host, req)
  const from = host.nodes.get(req.as)
  // resolved a moment ago by the send: answered from the cache
  const target = await resolveTarget(host, req.to).catch(() => undefined)
  if (from !== undefined && target !== undefined) {
    host.receipts.sent({ id: r.id, to: target.id, from: from.record.id, dest: target.kind === 'remote' ? target.host : 'local', state: r.state, off: off === true })
  }
  return { ...r, receipt: off === true ? 'off' : r.state }
}

function view (host: Host, r: SentReceipt): Record<string, unknown> {
  return { id: r.id, to: r.to, to_name: host.label(r.to), state: stateOf(r), receipts: r.off !== true, events: r.events.map((e) => ({ ...e, time: new Date(e.at).toISOString() })) }
}

async function receiptOf (host: Host, id: string): Promise<SentReceipt> {
  const r = await host.receipts.store.get(id)
  if (r === undefined) throw new InvalidArgumentError(`no receipt for message ${id}: this host did not send it (or not with receipts)`)
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

async function waitFor (host: Host, id: string, want: ReceiptState, timeout: number): Promise<Record<string, unknown>> {
  const first = await receiptOf(host, id)
  const settled = (x: SentReceipt): boolean => hasReached(x, want) || ended(x)
  const r = settled(first)
    ? first
    : await new Promise<SentReceipt>((resolve) => {
      const done = (x: SentReceipt): void => { clearTimeout(timer); host.receipts.store.off('change', onChange); resolve(x) }
      const onChange = (x: SentReceipt): void => { if (x.id === id && settled(x)) done(x) }
      const timer = setTimeout(() => { void receiptOf(host, id).then(done, () => done(first)) }, timeout)
      host.receipts.store.on('change', onChange)
    })
  return { ...view(host, r), reached: hasReached(r, want) }
}

export function receiptMethods (host: Host): MethodTable {
  return {
    send: method({ params: receiptSendSchema, fast: fastSend, call: async (p) => await sendWithReceipt(host, p) }),
    'receipt.get': method({
      params: z.object({ id: msgId }).strict(),
      call: async (p) => view(host, await receiptOf(host, p.id))
    }),
    'receipt.wait': method({
      params: z.object({ id: msgId, state: z.enum(RECEIPT_STATES), timeout_ms: z.number().int().min(0).max(MAX_WAIT) }).strict(),
      call: async (p) => await waitFor(host, p.id, p.state, p.timeout_ms)
    })
  }
}
