import type { ControlClient } from '../../control/client.js'
import { queryDaemon } from '../../control/connect.js'
import { InvalidArgumentError } from '../../util/errors.js'
import { bool, needPositionals, parseDuration, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { printJson, printLine } from '../output.js'

// `amesh receipt MSG_ID` and `amesh send --wait STATE`: what became of a sent message.

export const WAIT_STATES = ['delivered', 'pushed', 'read'] as const
/** `send --wait` gives up after this long unless --timeout says otherwise */
const DEFAULT_WAIT = 60_000
/** exit code of `send --wait` when the state was not reached in time */
export const EXIT_NOT_REACHED = 3

type WaitState = typeof WAIT_STATES[number]

function isWaitState (w: string): w is WaitState {
  return (WAIT_STATES as readonly string[]).includes(w)
}

function waitState (args: Parsed): WaitState | undefined {
  const w = str(args, 'wait')
  if (w !== undefined && !isWaitState(w)) throw new InvalidArgumentError(`--wait takes ${WAIT_STATES.join(', ')}`)
  if (w !== undefined && bool(args, 'no-receipt')) throw new InvalidArgumentError('--wait needs receipts: drop --no-receipt')
  return w
}

/** After a send: block until the message reached `--wait`'s state; the exit code. */
export async function waitAfterSend (client: ControlClient, args: Parsed, id: string): Promise<number | undefined> {
  const want = waitState(args)
  if (want === undefined) return undefined
  const timeout = str(args, 'timeout')
  const r = await client.call('receipt.wait', { id, state: want, timeout_ms: timeout === undefined ? DEFAULT_WAIT : parseDuration(timeout) })
  if (bool(args, 'json')) printJson(r)
  else printLine(`${r.id} ${r.state}`)
  if (r.reached === true) return 0
  process.stderr.write(`amesh send: message ${id} is ${r.state}, not ${want}${r.state === 'refused' || r.state === 'dead' ? '' : ' (timed out)'}\n`)
  return EXIT_NOT_REACHED
}

/** Checked before sending, so a bad --wait sends nothing. */
export function checkWaitFlags (args: Parsed): void {
  waitState(args)
}

export const receipt: Command = {
  name: 'receipt',
  summary: 'what became of a message this host sent: delivered, pushed, read, refused, dead',
  usage: 'amesh receipt MSG_ID [--json]',
  help: `Shows the receipt history of a message sent from this host, with times: queued (in the
outbox), delivered (in the receiving node's inbox), pushed (shown to an attached session),
read (the session handled it), refused or dead (with the reason). The receiving host reports
pushed and read over the mesh; a receiver may hide read (hide_read_receipts in its config).`,
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 1, receipt.usage)
    const r = await queryDaemon(home, 'receipt.get', { id: args.positionals[0] })
    if (bool(args, 'json')) { printJson(r); return 0 }
    printLine(`${r.id} to ${r.to_name}: ${r.state}`)
    for (const e of r.events) printLine(`  ${e.time} ${e.state}${e.reason === undefined ? '' : ` ${e.reason}`}`)
    return 0
  }
}
