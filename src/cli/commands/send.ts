import { readFileSync } from 'node:fs'
import type { ControlClient } from '../../control/client.js'
import { MAX_BATCH_CHARS, MAX_BATCH_SENDS } from '../../control/batch-limits.js'
import type { ResultOf } from '../../control/methods.js'
import type { BroadcastMember } from '../../control/wire.js'
import { SIGNAL_RULES, TEXT_FIELD } from '../../packet/rules.js'
import type { PayloadField, Signal } from '../../packet/types.js'
import { SIGNALS } from '../../packet/types.js'
import { errorCode, errorMessage, InvalidArgumentError } from '../../util/errors.js'
import { bool, parseDuration, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { connectOrStart } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'
import { checkArgText, readAllText, strictLines } from './send-input.js'
import { checkWaitFlags, waitAfterSend } from './receipt.js'

/** The payload field TEXT fills for `signal` (packet/rules.ts TEXT_FIELD; the help lists it). */
export function primaryField (signal: Signal): PayloadField {
  return TEXT_FIELD[signal]
}

/** "SPAWN → context, RETURN → result, …" for the help, from the same table. */
const TEXT_FIELDS_HELP = SIGNALS.map((s) => `${s} → ${TEXT_FIELD[s]}`).join(', ')

function signalOf (args: Parsed): Signal {
  const s = (str(args, 'signal') ?? 'MESSAGE').toUpperCase()
  if (!(SIGNALS as readonly string[]).includes(s)) throw new InvalidArgumentError(`unknown signal ${s} (known: ${SIGNALS.join(', ')})`)
  return s as Signal
}

function parseJson (raw: string, flag: string): unknown {
  try { return JSON.parse(raw) } catch (err) { throw new InvalidArgumentError(`${flag} is not valid JSON: ${errorMessage(err)}`) }
}

function readFlagFile (path: string, flag: string): string {
  try { return readAllText(readFileSync(path), flag) } catch (err) {
    if (err instanceof InvalidArgumentError) throw err
    throw new InvalidArgumentError(`${flag} ${path}: ${errorMessage(err)}`)
  }
}

/** --payload, then --context-json / --context-file (a JSON value as payload.context). */
function payloadOf (args: Parsed): Record<string, unknown> {
  const raw = str(args, 'payload')
  const payload: Record<string, unknown> = {}
  if (raw !== undefined) {
    const v = parseJson(raw, '--payload')
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidArgumentError('--payload must be a JSON object')
    Object.assign(payload, v)
  }
  const json = str(args, 'context-json')
  const file = str(args, 'context-file')
  if (json !== undefined && file !== undefined) throw new InvalidArgumentError('pass --context-json or --context-file, not both')
  const context = json !== undefined ? parseJson(json, '--context-json') : file !== undefined ? parseJson(readFlagFile(file, '--context-file'), '--context-file') : undefined
  if (context !== undefined) {
    if (payload.context !== undefined) throw new InvalidArgumentError('payload.context is given twice (--payload and --context-json/--context-file)')
    payload.context = context
  }
  return payload
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

/** TEXT into the signal's main field; when that is already set (e.g. --context-json for SPAWN), into text if the signal allows it. */
function withText (base: Record<string, unknown>, payload: Record<string, unknown>, text: string | undefined): Record<string, unknown> {
  if (text === undefined) return { ...base, payload }
  const signal = base.signal as Signal
  let field: PayloadField = primaryField(signal)
  if (payload[field] !== undefined) {
    if (!SIGNAL_RULES[signal].allowed.includes('text')) throw new InvalidArgumentError(`TEXT fills payload.${field} for ${signal}, which is already given`)
    field = 'text'
  }
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

/** Where the message text comes from: an argument, a file, all of stdin, or stdin line by line (`-`). */
type Input = 'arg' | 'file' | 'stdin'

function inputOf (args: Parsed): Input {
  const file = str(args, 'file') !== undefined
  if (file && bool(args, 'stdin')) throw new InvalidArgumentError('pass --file or --stdin, not both')
  return file ? 'file' : bool(args, 'stdin') ? 'stdin' : 'arg'
}

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk as Buffer)
  return readAllText(Buffer.concat(chunks), 'stdin')
}

/** The target (or group head) and the TEXT argument, from the positionals. */
function positionalsOf (args: Parsed, input: Input, group: boolean, structured: boolean): { to?: string, text?: string } {
  const pos = args.positionals
  const wantsText = input === 'arg'
  const max = 1 + (wantsText ? 1 : 0)
  const min = (group ? 0 : 1) + (wantsText && !structured ? 1 : 0)
  if (pos.length < min) throw new InvalidArgumentError(`missing arguments; usage: ${send.usage}`)
  if (pos.length > max) throw new InvalidArgumentError(`unexpected argument "${pos[max]}"; usage: ${send.usage}`)
  if (group) return wantsText ? (pos.length === 2 ? { to: pos[0], text: pos[1] } : { text: pos[0] }) : { to: pos[0] }
  return { to: pos[0], text: pos[1] }
}

async function textOf (args: Parsed, input: Input, arg: string | undefined): Promise<string | undefined> {
  const allowEmpty = bool(args, 'allow-empty')
  if (input === 'file') return checkArgText(readFlagFile(str(args, 'file') ?? '', '--file'), allowEmpty)
  if (input === 'stdin') return checkArgText(await readStdin(), allowEmpty)
  return arg === undefined || arg === '-' ? arg : checkArgText(arg, allowEmpty)
}

function memberLine (m: BroadcastMember): string {
  return `${m.to} ${m.result}${m.id === undefined ? '' : ` ${m.id}`}`
}

async function sendOne (client: ControlClient, args: Parsed, req: Record<string, unknown>): Promise<number> {
  const r = await client.request<ResultOf<'send'>>('send', req)
  const json = bool(args, 'json')
  if (r.members !== undefined) {
    if (json) printJson(r)
    else { printLine(`broadcast ${r.broadcast ?? r.id}`); for (const m of r.members) printLine(memberLine(m)) }
    return r.members.some((m) => m.state === 'refused') ? 1 : 0
  }
  if (json) printJson(r)
  else printLine(`${r.id} ${r.state}`)
  return await waitAfterSend(client, args, r.id) ?? 0
}

export const send: Command = {
  name: 'send',
  summary: 'send a message (durable before it returns), or broadcast it to a group',
  usage: 'amesh send --as NODE (TO | --to-group [NODE]) [TEXT|-] [--file F | --stdin] [--signal S] [--payload JSON] [--context-json JSON | --context-file F] [--conversation ID] [--reply-to MSGID] [--priority P] [--requires-reply] [--zone Z] [--ttl DURATION] [--allow-empty] [--no-receipt] [--wait delivered|pushed|read [--timeout DURATION]] [--json]',
  help: `Sends from local node NODE (created on first use) to TO (a node name or did:key id).
Returns once the packet is durable: "queued" in the outbox for a remote host, or
"delivered" into a local node's inbox. TEXT fills the signal's main field:
${TEXT_FIELDS_HELP}
(with that field already given, e.g. by --context-json, TEXT fills text where the signal allows it).
With - as TEXT, every stdin line is one message (empty lines are skipped), sent in order
in batches (one control call per batch), and one JSON result line is printed per message; --file F or --stdin sends the whole content as ONE
message (multi-line, up to the packet bound). Text must be valid UTF-8 (other bytes are
refused, never replaced) and is sent byte for byte, a leading U+FEFF (BOM) included;
an empty TEXT is refused unless --allow-empty.

  --to-group [NODE]   broadcast: one durable copy per member of NODE's own group (its parent,
                      siblings and children) or, with NODE, the group NODE heads (NODE and its
                      children); each copy is checked by its receiver's ACL like a direct send.
                      Prints the broadcast id and one line per member: delivered, queued or
                      refused: CODE (exit 1 when any member refused)
  --signal S          MESSAGE (default), SPAWN, RETURN, BLOCKED_ON, CHECKPOINT, HANDOFF, ESCALATE, ERROR
  --payload JSON      more payload fields the signal allows: {"decision": {...}, "options": ["a", {"id":"b","label":"B"}]}
  --context-json JSON payload.context as a JSON value (object, array, string, number, …);
  --context-file F    the same, read from file F
  --conversation ID   conversation id; --reply-to MSGID sets in_reply_to (and keeps its conversation)
  --priority P        low | normal | high;  --requires-reply;  --zone kernel|project|personal
  --ttl DURATION      outbox time-to-live (e.g. 30s, 10m, 2h; default 24h); then a dead letter
  --allow-empty       send an empty TEXT
  --wait STATE        block until the message is delivered, pushed or read (docs/DELIVERY.md);
                      --timeout DURATION (default 1m): on timeout, print the state reached, exit 3
  --no-receipt        mark the packet no_receipt: the receiving host reports neither pushed nor read`,
  flags: { as: 'string', signal: 'string', payload: 'string', 'context-json': 'string', 'context-file': 'string', file: 'string', stdin: 'boolean', 'to-group': 'boolean', conversation: 'string', 'reply-to': 'string', priority: 'string', zone: 'string', 'requires-reply': 'boolean', ttl: 'string', 'allow-empty': 'boolean', wait: 'string', timeout: 'string', 'no-receipt': 'boolean' },
  run: async (args, home) => {
    const as = str(args, 'as')
    if (as === undefined) throw new InvalidArgumentError(`--as NODE is required; usage: ${send.usage}`)
    const input = inputOf(args)
    const group = bool(args, 'to-group')
    const payload = payloadOf(args)
    const pos = positionalsOf(args, input, group, Object.keys(payload).length > 0)
    const base = baseRequest(args, as, group ? 'broadcast' : pos.to ?? '')
    if (group && pos.to !== undefined) base.group = pos.to
    checkWaitFlags(args)
    const lines = pos.text === '-'
    if (lines && str(args, 'wait') !== undefined) throw new InvalidArgumentError('--wait takes one message (TEXT), not stdin')
    if (group && str(args, 'wait') !== undefined) throw new InvalidArgumentError('--wait takes one message, not a broadcast: wait on a member\'s message id with amesh receipt')
    const text = await textOf(args, input, pos.text)
    const client = await connectOrStart(home)
    try {
      if (lines) return await sendStdin(client, base, payload)
      return await sendOne(client, args, withText(base, payload, text))
    } finally {
      client.close()
    }
  }
}
