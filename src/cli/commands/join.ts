import { ControlClient } from '../../control/client.js'
import { INFO_NOT_RUNNING_EXIT, parseSshTarget } from '../../control/ssh-target.js'
import { homePaths } from '../../control/paths.js'
import { DaemonNotRunningError, InvalidArgumentError } from '../../util/errors.js'
import { bool, list, needPositionals, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { callDaemon, connectOrStart } from '../../control/connect.js'
import { checkPeerAddr } from '../../control/peer-addr.js'
import { printJson, printLine } from '../output.js'

const USAGE = `amesh join MULTIADDR [--any-peer]
       amesh join --forget MULTIADDR
       amesh join --ssh [USER@]HOST[:PORT] [--identity FILE] [--ssh-option OPT]... [--ssh-config FILE]
                  [--remote-amesh CMD] [--remote-home DIR]
       amesh join --tunnels [--json]
       amesh join --leave TARGET
       amesh join --info [--json]`

/** `--info`: this host's peer id and tunnel target, from a running daemon only (never starts one). */
async function info (args: Parsed, home: string): Promise<number> {
  let client: ControlClient
  try {
    client = await ControlClient.connect(homePaths(home).socket)
  } catch (err) {
    if (!(err instanceof DaemonNotRunningError)) throw err
    process.stderr.write(`amesh join: amesh is not running for home ${home}\n`)
    return INFO_NOT_RUNNING_EXIT
  }
  try {
    const r = await client.call('discovery.info')
    if (bool(args, 'json')) printJson(r)
    else printLine(`${r.peerId}\ntunnel target ${r.tunnelTarget.host}:${r.tunnelTarget.port}\n${r.addrs.join('\n')}`)
    return 0
  } finally {
    client.close()
  }
}

async function viaSsh (args: Parsed, home: string, target: string): Promise<number> {
  needPositionals(args, 0, USAGE)
  const { destination, port } = parseSshTarget(target)
  const params = {
    destination,
    port,
    identity: str(args, 'identity'),
    config: str(args, 'ssh-config'),
    options: list(args, 'ssh-option'),
    remoteAmesh: str(args, 'remote-amesh'),
    remoteHome: str(args, 'remote-home')
  }
  const client = await connectOrStart(home)
  try {
    const r = await client.call('join.ssh', params)
    if (bool(args, 'json')) printJson(r)
    else printLine(`joined ${r.peerId ?? '?'} through ssh ${target} (local port ${r.localPort ?? '?'})`)
    return 0
  } finally {
    client.close()
  }
}

async function forgetPeer (args: Parsed, home: string, addr: string): Promise<number> {
  needPositionals(args, 0, USAGE)
  const r = await callDaemon(home, 'join.forget', { addr })
  if (bool(args, 'json')) printJson(r)
  else if (r.forgotten) printLine(`forgot ${addr}: it is no longer dialled at start (a connection open now stays until it drops)`)
  else process.stderr.write(`amesh join: ${addr} is not a remembered peer (\`amesh peers\` lists them)\n`)
  return r.forgotten ? 0 : 1
}

const simple = callDaemon

export const join: Command = {
  name: 'join',
  summary: 'connect to another host (by address or through ssh) and remember it',
  usage: USAGE,
  help: `Dials MULTIADDR (e.g. /ip4/10.0.0.2/tcp/4747/p2p/12D3Koo...) now, exchanges node cards,
and remembers the address as a bootstrap peer for later starts. MULTIADDR must end in
/p2p/<peer id> (so the host reached is the one meant); a dial that fails is reported and
nothing is remembered.

With --ssh, asks the remote host's amesh (over ssh, without starting it there) for its
peer id and port, keeps an ssh port-forward to it running (restarted with backoff if it
dies), dials the remote through it, and remembers the join across restarts. The remote
reaches back over the same connection.

  --ssh [USER@]HOST[:PORT]  the remote host (ssh runs in batch mode: keys, no passwords)
  --identity FILE           ssh private key (ssh -i)
  --ssh-option OPT          ssh -o option, repeatable (e.g. UserKnownHostsFile=/path)
  --ssh-config FILE         ssh config file (ssh -F), or "none"
  --remote-amesh CMD        the amesh command on the remote (default: amesh)
  --remote-home DIR         the amesh home on the remote (default: its $AMESH_HOME or ~/.amesh)
  --tunnels                 list this host's ssh tunnels and their state
  --leave TARGET            stop a tunnel and forget the join (TARGET as --tunnels shows it)
  --any-peer                accept MULTIADDR without /p2p/<peer id> (dial whoever answers there)
  --forget MULTIADDR        forget a remembered peer address (\`amesh peers\` lists them)
  --info                    print this host's peer id and tunnel target; exits ${INFO_NOT_RUNNING_EXIT} when no daemon runs`,
  flags: {
    ssh: 'string',
    identity: 'string',
    'ssh-option': 'list',
    'ssh-config': 'string',
    'remote-amesh': 'string',
    'remote-home': 'string',
    tunnels: 'boolean',
    leave: 'string',
    info: 'boolean',
    'any-peer': 'boolean',
    forget: 'string'
  },
  run: async (args, home) => {
    if (bool(args, 'info')) { needPositionals(args, 0, USAGE); return await info(args, home) }
    const ssh = str(args, 'ssh')
    if (ssh !== undefined) return await viaSsh(args, home, ssh)
    if (bool(args, 'tunnels')) {
      needPositionals(args, 0, USAGE)
      const rows = await simple(home, 'join.tunnels', {})
      for (const t of rows) {
        if (bool(args, 'json')) printJson(t)
        else printLine(`${t.target}  ${t.state}  peer ${t.peerId ?? '?'}  port ${t.localPort ?? '?'}  pid ${t.pid ?? '-'}  restarts ${t.restarts}${t.lastError !== undefined ? `  last error: ${t.lastError}` : ''}`)
      }
      return 0
    }
    const leave = str(args, 'leave')
    if (leave !== undefined) {
      needPositionals(args, 0, USAGE)
      const r = await simple(home, 'join.leave', { target: leave })
      if (bool(args, 'json')) printJson(r)
      else if (r.removed) printLine(`left ${leave}`)
      else process.stderr.write(`amesh join: no ssh tunnel ${leave} on this host (\`amesh join --tunnels\` lists them)\n`)
      return r.removed ? 0 : 1
    }
    const forget = str(args, 'forget')
    if (forget !== undefined) return await forgetPeer(args, home, forget)
    for (const f of ['identity', 'ssh-option', 'ssh-config', 'remote-amesh', 'remote-home']) {
      if (args.flags.has(f)) throw new InvalidArgumentError(`--${f} only goes with --ssh`)
    }
    needPositionals(args, 1, USAGE)
    const anyPeer = bool(args, 'any-peer')
    checkPeerAddr(args.positionals[0], { anyPeer })
    const r = await simple(home, 'join', { addr: args.positionals[0], any_peer: anyPeer ? true : undefined })
    if (bool(args, 'json')) printJson(r)
    else printLine(`joined ${r.peerId}`)
    return 0
  }
}
