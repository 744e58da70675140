import type { ResultOf } from '../control/methods.js'
import { BROADCAST_TO, type SendParams } from '../control/send-params.js'
import type { Handlers } from '../control/server.js'
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

async function waitFor (host: Host, id: string, want: ReceiptState, timeout: number): Promise<ReceiptView & { reached: boolean }> {
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

/** `send` to "broadcast": the copies, and a receipt history for each one sent. */
async function broadcast (host: Host, req: SendParams, off: boolean): Promise<ResultOf<'send'>> {
  const b = await host.broadcaster.broadcast(req)
  const from = host.nodes.get(req.as)
  for (const m of b.members) {
    if (m.id === undefined || from === undefined || m.state === 'refused') continue
    const target = await host.resolver.resolve(m.to_id).catch(() => undefined)
    if (target === undefined) continue
    host.receipts.sent({ id: m.id, to: m.to_id, from: from.record.id, dest: target.kind === 'remote' ? target.host : 'local', state: m.state, off })
  }
  const pending = b.members.some((m) => m.state === 'queued')
  return { ...b, state: pending ? 'queued' : 'delivered', receipt: 'off' }
}

export function receiptMethods (host: Host): Handlers<'send' | 'receipt.get' | 'receipt.wait'> {
  return {
    /** `send`: the message, then its receipt history (queued, or delivered for a local node). */
    send: {
      call: async (p) => {
        const { no_receipt: off, ...req } = p
        if (req.to === BROADCAST_TO) return await broadcast(host, req, off === true)
        if (req.group !== undefined) throw new InvalidArgumentError(`group names a broadcast's group: pass to "${BROADCAST_TO}" with it`)
        const r = await host.sender.send(req)
        const from = host.nodes.get(req.as)
        // resolved a moment ago by the send: answered from the cache
        const target = await host.resolver.resolve(req.to).catch(() => undefined)
        if (from !== undefined && target !== undefined) {
          host.receipts.sent({ id: r.id, to: target.id, from: from.record.id, dest: target.kind === 'remote' ? target.host : 'local', state: r.state, off: off === true })
        }
        return { ...r, receipt: off === true ? 'off' : r.state }
      }
    },
    'receipt.get': { call: async (p) => view(host, await receiptOf(host, p.id)) },
    'receipt.wait': { call: async (p) => await waitFor(host, p.id, p.state, p.timeout_ms) }
  }
}
