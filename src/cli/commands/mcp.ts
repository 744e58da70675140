import { format } from 'node:util'
import { resolveOptions } from '../../mcp/options.js'
import { claudeCommand, installMcpJson, type McpServerEntry } from '../../mcp/install.js'
import { DEFAULT_LISTEN, initHome } from '../../control/home.js'
import { InvalidArgumentError } from '../../util/errors.js'
import { bool, int, parseDuration, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { BIN } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'

/** stdout carries JSON-RPC only: anything that tries console output goes to stderr. */
function guardStdout (): void {
  const toStderr = (...args: unknown[]): void => { process.stderr.write(format(...args) + '\n') }
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
}

function nameOf (args: Parsed): string {
  const name = str(args, 'name')
  if (name === undefined) throw new InvalidArgumentError(`--name NAME is required; usage: ${mcp.usage}`)
  return name
}

/** The session flags, as given (to pass on in .mcp.json). */
function sessionArgs (args: Parsed, home: string): string[] {
  const out = ['mcp', '--name', nameOf(args)]
  if (args.flags.has('home')) out.push('--home', home)
  for (const flag of ['parent', 'approver', 'loop-limit', 'loop-window', 'repush', 'log']) {
    const v = str(args, flag)
    if (v !== undefined) out.push(`--${flag}`, v)
  }
  if (bool(args, 'permission-relay')) out.push('--permission-relay')
  return out
}

function install (args: Parsed, home: string): number {
  const portable = bool(args, 'portable')
  // portable: the home exactly as given (a relative or ~ path stays so), never this machine's absolute path
  const session = sessionArgs(args, portable ? (str(args, 'home') ?? home) : home)
  const initialised = initHome(home, { listen: DEFAULT_LISTEN, mdns: true })
  const entry: McpServerEntry = portable
    ? { command: 'amesh', args: session }
    : { command: process.execPath, args: [BIN, ...session] }
  const path = installMcpJson(process.cwd(), entry)
  const command = claudeCommand()
  if (bool(args, 'json')) { printJson({ path, server: 'amesh', entry, command, home_initialised: initialised }); return 0 }
  if (initialised) printLine(`set up the amesh home ${home} (config.yaml: listen ${DEFAULT_LISTEN.join(' ')}, mDNS on)`)
  printLine(`updated ${path} (server "amesh": ${[entry.command, ...entry.args].join(' ')})
Claude Code asks before it starts a server from a project's .mcp.json ("Pending approval"):
approve "amesh" when it asks, or add {"enabledMcpjsonServers":["amesh"]} to .claude/settings.local.json.
start Claude Code with the channel enabled:
  ${command}`)
  return 0
}

async function serve (args: Parsed, home: string): Promise<number> {
  guardStdout()
  const window = str(args, 'loop-window')
  const opts = resolveOptions({
    home,
    name: nameOf(args),
    parent: str(args, 'parent'),
    approver: str(args, 'approver'),
    permissionRelay: bool(args, 'permission-relay') ? true : undefined,
    loopLimit: int(args, 'loop-limit'),
    loopWindow: window === undefined ? undefined : parseDuration(window),
    repushLimit: int(args, 'repush'),
    logFile: str(args, 'log'),
    toolsOnly: bool(args, 'tools-only')
  })
  // the MCP SDK loads only in the MCP process
  const { runMcp } = await import('../../mcp/server.js')
  const session = await runMcp(opts)
  const stopSignal = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve())
    process.once('SIGINT', () => resolve())
    process.stdout.on('error', () => resolve())
  })
  await Promise.race([session.closed, stopSignal])
  await session.stop()
  return 0
}

export const mcp: Command = {
  name: 'mcp',
  summary: 'MCP stdio server that attaches a Claude Code session as a node',
  usage: 'amesh mcp --name NAME [--parent NODE] [--permission-relay [--approver NODE]] [--loop-limit N] [--loop-window DURATION] [--repush N] | amesh mcp install --name NAME [--portable]',
  help: `Runs an MCP stdio server (for Claude Code) that attaches the session to the mesh as the
external node NAME (created on first use; with --parent, under that parent), starting the
host daemon when none runs. Every unread packet in NAME's inbox arrives in the session as a
notifications/claude/channel event: that makes it "pushed", never "read". A message is read
(and the node's cursor moves) only when the session handles it: reply to it, ack it, or
take it with the inbox tool (see docs/DELIVERY.md). Each new session of the node gets every
unread message pushed again, in order (at most --repush of the backlog; the rest: inbox).
A client that only lists tools or checks health (claude mcp list) reads nothing.
Tools: send, broadcast (one copy to each member of the node's group), reply, ack, inbox,
receipt, status, nodes, grant, revoke, approve, deny, and spawn (start a managed worker
node from a YAML spec, with this node as its parent).
Writes nothing but JSON-RPC to stdout.

  --permission-relay     relay Claude Code permission prompts to the approver as ESCALATE packets
  --approver NODE        the node that answers them (default: the parent)
  --loop-limit N         automatic replies per peer and conversation within the window (default 10)
  --loop-window DURATION the loop guard's window (default 10m)
  --repush N             unread backlog messages pushed again to each new session (default 200)
  --log FILE             log here instead of stderr
  --tools-only           tools only: no channel events, the inbox is not consumed (ACP nodes)
Defaults for every session, or per node, may also be set in <home>/mcp.yaml
(permission_relay, approver, loop_limit, loop_window_ms, repush_limit; nodes: {NAME: {...}}).

amesh mcp install --name NAME [session flags] adds or updates the "amesh" server in
./.mcp.json (other servers are kept) and prints the command that starts Claude Code with
the channel enabled. It also sets up the home (config.yaml with \`amesh up\`'s defaults) when it
has none, so the session can start the daemon. --portable writes "amesh" as the command and
the --home exactly as given, instead of absolute paths.`,
  flags: { name: 'string', parent: 'string', approver: 'string', 'permission-relay': 'boolean', 'loop-limit': 'string', 'loop-window': 'string', repush: 'string', log: 'string', portable: 'boolean', 'tools-only': 'boolean' },
  run: async (args, home) => {
    const [sub, ...extra] = args.positionals
    if (extra.length > 0 || (sub !== undefined && sub !== 'install')) throw new InvalidArgumentError(`unexpected argument "${extra[0] ?? sub ?? ''}"; usage: ${mcp.usage}`)
    return sub === 'install' ? install(args, home) : await serve(args, home)
  }
}
