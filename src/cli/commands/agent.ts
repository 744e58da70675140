import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { LOG_FILE, agentDir, logFiles } from '../../control/agent-files.js'
import { homePaths } from '../../control/paths.js'
import { InvalidArgumentError } from '../../util/errors.js'
import { bool, needPositionals, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { callDaemon } from '../../control/connect.js'
import type { AgentRow } from '../../control/wire.js'
import { printJson, printLine, printLineAsync } from '../output.js'

const USAGE = `amesh agent start SPEC [--parent NODE] [--name NAME] [--json]
       amesh agent stop NAME [--json]
       amesh agent ls [--json]
       amesh agent logs NAME [--follow]
       amesh agent heartbeat [NAME]`

const call = callDaemon

function uptime (ms: number): string {
  const s = Math.floor(ms / 1000)
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${s % 60}s` : `${Math.floor(s / 3600)}h${Math.floor(s / 60) % 60}m`
}

function row (a: AgentRow): string {
  const pid = a.pid === null || a.pid === undefined ? '-' : String(a.pid)
  const parent = a.parent === null || a.parent === undefined ? '-' : String(a.parent)
  const where = a.state === 'remote' ? `  on ${String(a.host)}` : ''
  return `${String(a.name).padEnd(16)} ${String(a.state).padEnd(8)} pid ${pid.padEnd(7)} restarts ${String(a.restarts ?? 0).padEnd(3)} up ${uptime(Number(a.uptime_ms ?? 0)).padEnd(7)} parent ${parent.padEnd(12)} ${String(a.id)}${where}${acpPart(a.acp)}`
}

/** An ACP node's agent, its state and sessions (docs/ACP.md). */
function acpPart (acp: unknown): string {
  if (typeof acp !== 'object' || acp === null) return ''
  const v = acp as Record<string, unknown>
  return `  acp ${String(v.agent ?? '?')} ${String(v.version ?? '?')} ${String(v.state ?? '?')} sessions ${String(v.sessions ?? 0)}`
}

async function start (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 2, USAGE)
  // inside a managed node or a session, the caller is the parent
  const parent = str(args, 'parent') ?? (process.env.AMESH_NODE !== undefined && process.env.AMESH_NODE !== '' ? process.env.AMESH_NODE : undefined)
  const r = await call(home, 'agent.start', { path: resolve(args.positionals[1]), name: str(args, 'name'), parent })
  if (bool(args, 'json')) printJson(r)
  else printLine(`started ${String(r.name)} (${String(r.id)})${r.state === 'remote' ? ` on host ${String(r.host)}` : ` pid ${String(r.pid)}`}${r.parent !== null && r.parent !== undefined ? `, parent ${String(r.parent)}` : ''}`)
  return 0
}

async function stop (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 2, USAGE)
  const r = await call(home, 'agent.stop', { name: args.positionals[1] })
  if (bool(args, 'json')) printJson(r)
  else printLine(`stopped ${String(r.name)}`)
  return 0
}

async function ls (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 1, USAGE)
  const list = await call(home, 'agent.ls', {})
  for (const a of list) printLine(bool(args, 'json') ? JSON.stringify(a) : row(a))
  return 0
}

async function heartbeat (args: Parsed, home: string): Promise<number> {
  if (args.positionals.length > 2) throw new InvalidArgumentError(`unexpected argument "${args.positionals[2]}"; usage: ${USAGE}`)
  const name = args.positionals[1] ?? process.env.AMESH_NODE
  if (name === undefined || name === '') throw new InvalidArgumentError('agent heartbeat needs NAME (or AMESH_NODE set)')
  const r = await call(home, 'agent.heartbeat', { name })
  if (bool(args, 'json')) printJson(r)
  return 0
}

/** Print new bytes of the current log as it grows; starts over when it is rotated. */
async function follow (file: string, from: number): Promise<never> {
  let offset = from
  let ino = existsSync(file) ? statSync(file).ino : 0
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    if (!existsSync(file)) continue
    const st = statSync(file)
    if (st.ino !== ino || st.size < offset) { ino = st.ino; offset = 0 }
    if (st.size === offset) continue
    const fd = openSync(file, 'r')
    const buf = Buffer.alloc(st.size - offset)
    readSync(fd, buf, 0, buf.length, offset)
    closeSync(fd)
    offset = st.size
    process.stdout.write(buf)
  }
}

async function logs (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 2, USAGE)
  const dir = agentDir(homePaths(home).agents, args.positionals[1])
  if (!existsSync(dir)) throw new InvalidArgumentError(`no managed node named ${args.positionals[1]} in ${home}`)
  let size = 0
  for (const f of logFiles(dir)) {
    const text = readFileSync(f)
    if (f.endsWith(LOG_FILE)) size = text.length
    if (text.length > 0) await printLineAsync(text.toString('utf8').replace(/\n$/, ''))
  }
  if (bool(args, 'follow')) await follow(join(dir, LOG_FILE), size)
  return 0
}

const SUBCOMMANDS: Record<string, (args: Parsed, home: string) => Promise<number>> = { start, stop, ls, logs, heartbeat }

export const agent: Command = {
  name: 'agent',
  summary: 'managed nodes: start from a spec, stop, list, logs',
  usage: USAGE,
  help: `Managed nodes are started and supervised by amesh (see docs/AGENTS.md).
  start SPEC    start the node a YAML spec describes; its parent is --parent, else $AMESH_NODE
                (inside a managed node or session), else none (a root node). A spec with
                host: PEER runs it on that host, which needs a host grant for the parent:
                (there) amesh grant --host --to PARENT --cmd /agent/start
                --name NAME overrides the spec's name (one spec, several workers)
  stop NAME     SIGTERM, then SIGKILL after stop_timeout; its card is withdrawn; the node and
                its inbox stay (messages to it queue until it starts again)
  ls            name, id, kind, parent, state, pid, restarts, uptime
  logs NAME     captured stdout/stderr (rotated files, oldest first); --follow keeps printing
  heartbeat     report liveness for a spec with health.heartbeat (NAME defaults to $AMESH_NODE)`,
  flags: { parent: 'string', name: 'string', follow: 'boolean' },
  run: async (args, home) => {
    const sub = args.positionals[0]
    const fn = sub === undefined ? undefined : SUBCOMMANDS[sub]
    if (fn === undefined) throw new InvalidArgumentError(`unknown agent subcommand ${sub ?? '(none)'}; usage: ${USAGE}`)
    return await fn(args, home)
  }
}
