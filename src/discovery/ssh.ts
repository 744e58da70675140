// SSH-tunnelled bootstrap: ask a remote host's amesh for its peer id and
// port over ssh (`amesh join --info --json`, which never starts a daemon),
// keep an `ssh -N -L 127.0.0.1:<local>:<remote amesh addr>` port-forward
// running (restarted with backoff when it dies), and dial the remote through
// it. The remote reaches back over the same libp2p connection.

import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { INFO_NOT_RUNNING_EXIT, parseSshTarget } from '../control/ssh-target.js'
import { connect, createServer } from 'node:net'
import { AmeshError } from '../util/errors.js'
import { SECOND } from '../util/time.js'

/** ssh could not connect or authenticate. */
export class SshFailedError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) { super('SSH_FAILED', message, options); this.name = 'SshFailedError' }
}
/** The remote has no amesh command. */
export class RemoteAmeshMissingError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) { super('REMOTE_AMESH_MISSING', message, options); this.name = 'RemoteAmeshMissingError' }
}
/** amesh is installed on the remote but its daemon is not running. */
export class RemoteNotRunningError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) { super('REMOTE_NOT_RUNNING', message, options); this.name = 'RemoteNotRunningError' }
}
/** The port-forward did not come up. */
export class TunnelError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) { super('TUNNEL_FAILED', message, options); this.name = 'TunnelError' }
}

/** Exit status of `amesh join --info` when no daemon runs for the home. */
export const SSH_INFO_TIMEOUT = 20 * SECOND
export const TUNNEL_UP_TIMEOUT = 15 * SECOND

/** Everything needed to reach a remote host over ssh; stored for ssh joins. */
export interface SshJoinSpec {
  /** [user@]host */
  destination: string
  port?: number
  /** private key file (ssh -i) */
  identity?: string
  /** ssh config file (ssh -F), `none` for none */
  config?: string
  /** extra `-o` options, e.g. UserKnownHostsFile=/path */
  options: string[]
  /** the amesh command on the remote (default `amesh`) */
  remoteAmesh?: string
  /** the remote amesh home (default: the remote's $AMESH_HOME or ~/.amesh) */
  remoteHome?: string
}

/** What `amesh join --info --json` prints. */
export interface RemoteInfo {
  peerId: string
  addrs: string[]
  /** where the remote's amesh accepts connections, as seen from the remote itself */
  tunnelTarget: { host: string, port: number }
}

/** A stable key for a join (one tunnel per remote). */
export function joinKey (spec: SshJoinSpec): string {
  return `${spec.destination}:${spec.port ?? 22}:${spec.remoteHome ?? ''}`
}

/** ssh arguments common to the query and the tunnel: never interactive, fail fast, detect dead links. */
export function sshArgs (spec: SshJoinSpec): string[] {
  const args: string[] = []
  if (spec.config !== undefined) args.push('-F', spec.config)
  if (spec.identity !== undefined) args.push('-i', spec.identity)
  for (const o of spec.options) args.push('-o', o)
  args.push('-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10', '-o', 'ServerAliveInterval=5', '-o', 'ServerAliveCountMax=3')
  if (spec.port !== undefined) args.push('-p', String(spec.port))
  return args
}

/** Quote one word for the remote POSIX shell. */
export function shellQuote (word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}

function remoteCommand (spec: SshJoinSpec): string {
  // the amesh command may be several words ("node /opt/amesh/bin/amesh"): it is the user's, passed as given
  const cmd = spec.remoteAmesh ?? 'amesh'
  const home = spec.remoteHome === undefined ? [] : ['--home', shellQuote(spec.remoteHome)]
  return [cmd, 'join', '--info', '--json', ...home].join(' ')
}

function lastLines (text: string): string {
  return text.trim().split('\n').filter((l) => l.trim() !== '').slice(-2).join(' | ')
}

/** Ask the remote amesh, over ssh, for its peer id and where it listens. */
export async function queryRemote (spec: SshJoinSpec, timeout = SSH_INFO_TIMEOUT): Promise<RemoteInfo> {
  const target = `${spec.destination}${spec.port !== undefined ? ` port ${spec.port}` : ''}`
  const { code, stdout, stderr } = await new Promise<{ code: number | null, stdout: string, stderr: string }>((resolve, reject) => {
    execFile('ssh', [...sshArgs(spec), spec.destination, '--', remoteCommand(spec)], { timeout, encoding: 'utf8', maxBuffer: 1024 * 1024 }, (err, out, errOut) => {
      if (err !== null && (err as NodeJS.ErrnoException).code === 'ENOENT') { reject(new SshFailedError('ssh is not installed on this host', { cause: err })); return }
      const status = err === null ? 0 : typeof err.code === 'number' ? err.code : null
      resolve({ code: status, stdout: out, stderr: errOut })
    })
  })
  if (code === 255 || code === null) throw new SshFailedError(`ssh to ${target} failed: ${lastLines(stderr) || (code === null ? 'timed out' : 'exit 255')}`)
  if (code === 127 || /command not found|No such file or directory|not found/i.test(stderr) && code !== 0 && code !== INFO_NOT_RUNNING_EXIT) {
    throw new RemoteAmeshMissingError(`amesh is not installed on ${target} (${spec.remoteAmesh ?? 'amesh'}: ${lastLines(stderr) || `exit ${code}`}); install it there or pass --remote-amesh`)
  }
  if (code === INFO_NOT_RUNNING_EXIT) throw new RemoteNotRunningError(`amesh is not running on ${target}: ${lastLines(stderr)}; start it there with \`amesh up --detach\``)
  if (code !== 0) throw new RemoteAmeshMissingError(`amesh on ${target} failed (exit ${code}): ${lastLines(stderr)}`)
  return parseInfo(stdout, target)
}

function parseInfo (stdout: string, target: string): RemoteInfo {
  try {
    const v = JSON.parse(stdout.trim().split('\n').pop() ?? '') as Partial<RemoteInfo>
    const t = v.tunnelTarget
    if (typeof v.peerId === 'string' && Array.isArray(v.addrs) && t !== undefined && typeof t.host === 'string' && Number.isInteger(t.port) && t.port > 0) {
      return { peerId: v.peerId, addrs: v.addrs.filter((a): a is string => typeof a === 'string'), tunnelTarget: { host: t.host, port: t.port } }
    }
  } catch {
    // falls through to the error below
  }
  throw new RemoteAmeshMissingError(`the amesh on ${target} gave no usable answer to \`amesh join --info --json\` (too old?): ${stdout.slice(0, 200)}`)
}

/** A free TCP port on 127.0.0.1 (raced, as any such choice is; a failed bind makes ssh exit and another port is tried). */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address()
      const port = typeof a === 'object' && a !== null ? a.port : 0
      srv.close(() => { port > 0 ? resolve(port) : reject(new TunnelError('no free local port')) })
    })
  })
}

/** Start `ssh -N -L` for a remote target; the child is returned as soon as it is spawned. */
export function spawnForward (spec: SshJoinSpec, localPort: number, target: RemoteInfo['tunnelTarget']): ChildProcess {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host
  const args = [...sshArgs(spec), '-N', '-o', 'ExitOnForwardFailure=yes', '-L', `127.0.0.1:${localPort}:${host}:${target.port}`, spec.destination]
  return spawn('ssh', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/** Resolves once 127.0.0.1:port accepts connections; rejects when `failed()` says the forward died or on timeout. */
export async function waitForPort (port: number, failed: () => string | undefined, timeout = TUNNEL_UP_TIMEOUT): Promise<void> {
  const deadline = Date.now() + timeout
  while (true) {
    const why = failed()
    if (why !== undefined) throw new TunnelError(why)
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1')
      s.once('connect', () => { s.destroy(); resolve(true) })
      s.once('error', () => { s.destroy(); resolve(false) })
    })
    if (ok) return
    if (Date.now() > deadline) throw new TunnelError(`the ssh port-forward on 127.0.0.1:${port} did not come up within ${timeout} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export { INFO_NOT_RUNNING_EXIT, parseSshTarget }
