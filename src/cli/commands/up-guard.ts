// What `amesh up` checks before it starts and undoes when a first start
// fails: a running daemon is never touched, and a failed first start leaves
// no half-made home behind.
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { ControlClient } from '../../control/client.js'
import { homePaths } from '../../control/paths.js'
import { AmeshError, DaemonNotRunningError, errorMessage } from '../../util/errors.js'
import { processAlive } from '../../util/process-alive.js'

export class AlreadyRunningError extends AmeshError {
  constructor (home: string, pid: number) {
    super('ALREADY_RUNNING', `amesh is already running for home ${home} (pid ${pid}); \`amesh down --home ${home}\` stops it`)
    this.name = 'AlreadyRunningError'
  }
}

export class ListenAddressInUseError extends AmeshError {
  constructor (addrs: string[], options?: { cause?: unknown }) {
    super('ADDRESS_IN_USE', `cannot listen on ${addrs.join(', ')}: the address is in use (another amesh home or program holds the port); choose another with --listen or \`listen:\` in config.yaml`, options)
    this.name = 'ListenAddressInUseError'
  }
}

function pidFileOwner (home: string): number | undefined {
  try {
    const pid = Number(readFileSync(homePaths(home).pidFile, 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

/** The pid of the daemon running for this home (answering on its socket, or still starting), if any. Creates nothing. */
export async function runningDaemonPid (home: string): Promise<number | undefined> {
  if (!existsSync(home)) return undefined
  try {
    const client = await ControlClient.connect(homePaths(home).socket)
    try {
      return (await client.call('status')).pid
    } finally {
      client.close()
    }
  } catch (err) {
    if (!(err instanceof DaemonNotRunningError)) throw err
  }
  return pidFileOwner(home)
}

/** Which parts of a home existed before a start. */
export interface HomeSnapshot { home: boolean, config: boolean, hostKey: boolean, store: boolean, log: boolean }

export function snapshotHome (home: string): HomeSnapshot {
  const p = homePaths(home)
  return { home: existsSync(home), config: existsSync(p.config), hostKey: existsSync(p.hostKey), store: existsSync(p.store), log: existsSync(p.log) }
}

/** Remove what a failed start created: the whole home when it was new, else the parts it added. */
export function undoFirstStart (home: string, before: HomeSnapshot): void {
  if (!before.home) { rmSync(home, { recursive: true, force: true }); return }
  const p = homePaths(home)
  if (!before.hostKey) rmSync(p.hostKey, { force: true })
  if (!before.store) rmSync(p.store, { recursive: true, force: true })
  if (!before.config) rmSync(p.config, { force: true })
}

/** A start failure as the user should read it: a port in use is one line naming the address and the setting. */
export function firstStartFailure (err: unknown, listen: string[]): unknown {
  const text = errorMessage(err)
  if (/EADDRINUSE|address already in use|faultTolerance/i.test(text)) return new ListenAddressInUseError(listen, { cause: err })
  return err
}
