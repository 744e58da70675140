import { resolveHome } from '../control/paths.js'
import { DaemonNotRunningError, errorCode, errorMessage } from '../util/errors.js'
import { EXIT_NOT_RUNNING, EXIT_STORE_FAULT } from '../util/exit-codes.js'
import { bool, parseArgs, str } from './args.js'
import { COMMON_FLAGS, type Command } from './command.js'
import { COMMANDS } from './registry.js'

function usage (): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length))
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`)
  return `amesh — a peer-to-peer message substrate for AI agents

usage: amesh <command> [options]      (amesh <command> --help for details)

commands:
${lines.join('\n')}

every command takes --home DIR (default $AMESH_HOME, else ~/.amesh); listings take --json.
read-only commands (status, id, peers, nodes, node ls, card, inbox, outbox, grants) never start a
daemon: where none runs they say so and exit 3. Commands that change state start it (detached)
when none runs, but only on a home set up by \`amesh init\`, \`amesh up\` or \`amesh mcp install\`.`
}

function commandHelp (c: Command): string {
  return `usage: ${c.usage}\n\n${c.help}\n\n  --home DIR           the amesh home (default $AMESH_HOME, else ~/.amesh)\n  --json               machine-readable output`
}

/** The CLI entry: parse, run, map errors to one line on stderr and a non-zero exit. */
export async function main (argv: string[]): Promise<void> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n')
    process.exitCode = name === undefined ? 1 : 0
    return
  }
  const entry = COMMANDS.find((c) => c.name === name)
  if (entry === undefined) {
    process.stderr.write(`amesh: unknown command "${name}" (see amesh --help)\n`)
    process.exitCode = 2
    return
  }
  try {
    const command = await entry.load()
    const args = parseArgs(rest, { ...COMMON_FLAGS, ...command.flags })
    if (bool(args, 'help')) { process.stdout.write(commandHelp(command) + '\n'); return }
    process.exitCode = await command.run(args, resolveHome(str(args, 'home')))
  } catch (err) {
    process.stderr.write(`amesh ${name}: ${errorMessage(err)}\n`)
    // a full or faulted store is temporary: a distinct status tells a supervisor or script to retry
    const code = errorCode(err)
    process.exitCode = err instanceof DaemonNotRunningError ? EXIT_NOT_RUNNING : code === 'STORE_FULL' || code === 'STORE_FAULT' ? EXIT_STORE_FAULT : 1
  }
  exitSoon()
}

/** CLI commands end when their work is done, even if a socket lingers. */
function exitSoon (): void {
  // stdout to a pipe is asynchronous: exit only once everything written is flushed
  process.stdout.write('', () => {
    process.stderr.write('', () => process.exit(process.exitCode ?? 0))
  })
}
