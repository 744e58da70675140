import type { ControlClient } from '../../control/client.js'
import { MAX_BATCH_CHARS, MAX_BATCH_SENDS, type ResultOf } from '../../control/methods.js'
import { SIGNAL_RULES } from '../../packet/rules.js'
import type { PayloadField, Signal } from '../../packet/types.js'
import { SIGNALS } from '../../packet/types.js'
import { errorCode, errorMessage, InvalidArgumentError } from '../../util/errors.js'
import { bool, needPositionals, parseDuration, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { connectOrStart } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'
import { checkArgText, strictLines } from './send-input.js'
import { checkWaitFlags, waitAfterSend } from './receipt.js'

/** TEXT fills the signal's main payload field: text for MESSAGE/ESCALATE, result for RETURN, else context. */
export function primaryField (signal: Signal): PayloadField {
  const allowed = SIGNAL_RULES[signal].allowed
  if (allowed.includes('text')) return 'text'
  if (allowed.includes('result')) return 'result'
  return 'context'
}

function signalOf (args: Parsed): Signal {
  const s = (str(args, 'signal') ?? 'MESSAGE').toUpperCase()
  if (!(SIGNALS as readonly string[]).includes(s)) throw new InvalidArgumentError(`unknown signal ${s} (known: ${SIGNALS.join(', ')})`)
  return s as Signal
}

function payloadOf (args: Parsed): Record<string, unknown> {
  const raw = str(args, 'payload')
  if (raw === undefined) return {}
  let v: unknown
  try { v = JSON.parse(raw) } catch { throw new InvalidArgumentError('--payload must be a JSON object') }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidArgumentError('--payload must be a JSON object')
  return v as Record<string, unknown>
}

function baseRequest (args: Parsed, as: string, to: string): Record<string, unknown> {
  const ttl = str(args, 'ttl')
  return {
    as,
    to,
    signal: signalOf(args),
    conversation_id: str(args, 'conversation'),
    in_reply_to: str(args, 'reply-to'),
    priority: str(args, 'priority'),
    zone: str(args, 'zone'),
    requires_reply: bool(args, 'requires-reply') ? true : undefined,
    no_receipt: bool(args, 'no-receipt') ? true : undefined,
    ttl_ms: ttl === undefined ? undefined : parseDuration(ttl)
  }
}

function withText (base: Record<string, unknown>, payload: Record<string, unknown>, text: string): Record<string, unknown> {
  const field = primaryField(base.signal as Signal)
  return { ...base, payload: { ...payload, [field]: text } }
}

/** The first lines of `queue` that fit one `send.batch` (at least one), taken off it. */
function takeBatch (queue: string[], extraChars: number): string[] {
  let n = 0
  let chars = 0
  while (n < queue.length && n < MAX_BATCH_SENDS) {
    chars += queue[n].length + extraChars
    if (n > 0 && chars > MAX_BATCH_CHARS) break
    n++
  }
  return queue.splice(0, n)
}

/** Send one batch of lines; prints one result line per line, in order; returns how many failed. */
async function sendLines (client: ControlClient, base: Record<string, unknown>, payload: Record<string, unknown>, lines: string[]): Promise<number> {
  const sends = lines.map((line) => withText(base, payload, line))
  let results: ResultOf<'send.batch'>['results']
  try {
    // a lone line too large for a batch goes as a `send`, which words its own error
    results = lines.length === 1 && lines[0].length > MAX_BATCH_CHARS
      ? [await client.request<ResultOf<'send'>>('send', sends[0])]
      : (await client.call('send.batch', { sends })).results
  } catch (err) {
    results = lines.map(() => ({ error: { code: errorCode(err), message: errorMessage(err) } }))
  }
  let failures = 0
  for (const r of results) {
    if ('error' in r) failures++
    printJson(r)
  }
  return failures
}

/**
 * `send -`: every stdin line one message, in order. Lines are sent in
 * batches (`send.batch`, one call in flight): what arrived while the
 * previous batch was sent goes in the next, so a lone line leaves at once
 * and a burst costs one call per batch.
 */
async function sendStdin (client: ControlClient, base: Record<string, unknown>, payload: Record<string, unknown>): Promise<number> {
  const queue: string[] = []
  let ended = false
  let wake: (() => void) | undefined
  const reader = (async () => {
    try {
      for await (const line of strictLines(process.stdin)) {
        if (line === '') continue
        queue.push(line)
        wake?.()
      }
    } finally {
      ended = true
      wake?.()
    }
  })()
  reader.catch(() => {}) // awaited below, once the lines read before a failure were sent
  const extraChars = JSON.stringify(payload).length
  let failures = 0
  for (;;) {
    if (queue.length === 0) {
      if (ended) break
      await new Promise<void>((resolve) => { wake = resolve })
      wake = undefined
      continue
    }
    failures += await sendLines(client, base, payload, takeBatch(queue, extraChars))
  }
  await reader
  return failures === 0 ? 0 : 1
}

export const send: Command = {
  name: 'send',
  summary: 'send a message (durable before it returns)',
  usage: 'amesh send --as NODE TO TEXT|- [--signal S] [--payload JSON] [--conversation ID] [--reply-to MSGID] [--priority P] [--requires-reply] [--zone Z] [--ttl DURATION] [--allow-empty] [--no-receipt] [--wait delivered|pushed|read [--timeout DURATION]] [--json]',
  help: `Sends from local node NODE (created on first use) to TO (a node name or did:key id).
Returns once the packet is durable: "queued" in the outbox for a remote host, or
"delivered" into a local node's inbox. TEXT fills the signal's main field (text for
MESSAGE/ESCALATE, result for RETURN, context otherwise); with - as TEXT, every stdin line
is one message (empty lines are skipped), sent in order in batches (one control call per
batch), and one JSON result line is printed per message, in order.
Text must be valid UTF-8 (other bytes are refused, never replaced); an empty TEXT is
refused unless --allow-empty.

  --signal S          MESSAGE (default), SPAWN, RETURN, BLOCKED_ON, CHECKPOINT, HANDOFF, ESCALATE, ERROR
  --payload JSON      more payload fields the signal allows: {"context": "...", "options": ["a","b"], ...}
  --conversation ID   conversation id; --reply-to MSGID sets in_reply_to (and keeps its conversation)
  --priority P        low | normal | high;  --requires-reply;  --zone kernel|project|personal
  --ttl DURATION      outbox time-to-live (e.g. 30s, 10m, 2h; default 24h); then a dead letter
  --allow-empty       send an empty TEXT
  --wait STATE        block until the message is delivered, pushed or read (docs/DELIVERY.md);
                      --timeout DURATION (default 1m): on timeout, print the state reached, exit 3
  --no-receipt        mark the packet no_receipt: the receiving host reports neither pushed nor read`,
  flags: { as: 'string', signal: 'string', payload: 'string', conversation: 'string', 'reply-to': 'string', priority: 'string', zone: 'string', 'requires-reply': 'boolean', ttl: 'string', 'allow-empty': 'boolean', wait: 'string', timeout: 'string', 'no-receipt': 'boolean' },
  run: async (args, home) => {
    needPositionals(args, 2, send.usage)
    const as = str(args, 'as')
    if (as === undefined) throw new InvalidArgumentError(`--as NODE is required; usage: ${send.usage}`)
    const [to, text] = args.positionals
    const base = baseRequest(args, as, to)
    const payload = payloadOf(args)
    if (text !== '-') checkArgText(text, bool(args, 'allow-empty'))
    checkWaitFlags(args)
    if (text === '-' && str(args, 'wait') !== undefined) throw new InvalidArgumentError('--wait takes one message (TEXT), not stdin')
    const client = await connectOrStart(home)
    try {
      if (text === '-') return await sendStdin(client, base, payload)
      const r = await client.request<ResultOf<'send'>>('send', withText(base, payload, checkArgText(text, bool(args, 'allow-empty'))))
      if (bool(args, 'json')) printJson(r)
      else printLine(`${r.id} ${r.state}`)
      return await waitAfterSend(client, args, r.id) ?? 0
    } finally {
      client.close()
    }
  }
}
