import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ControlClient, type ParamsArg } from './client.js'
import type { CallName, ResultOf } from './methods.js'
import { homePaths } from './paths.js'
import { DaemonNotRunningError } from '../util/errors.js'
import { assertInitialised } from './home.js'

export const BIN = fileURLToPath(new URL('../../../bin/amesh', import.meta.url))
const START_TIMEOUT = 30_000

function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function logTail (home: string): string {
  try {
    const lines = readFileSync(homePaths(home).log, 'utf8').trim().split('\n')
    return lines.slice(-3).join(' | ')
  } catch {
    return ''
  }
}

/** Wait for a daemon to answer on the home's socket, or for the child to fail. */
export async function waitForDaemon (home: string, exited: () => number | null, timeout = START_TIMEOUT): Promise<ControlClient> {
  const deadline = Date.now() + timeout
  const sock = homePaths(home).socket
  while (Date.now() < deadline) {
    if (existsSync(sock)) {
      try { return await ControlClient.connect(sock) } catch { /* not yet listening */ }
    }
    const code = exited()
    if (code !== null) throw new DaemonNotRunningError(`the amesh daemon for ${home} failed to start (exit ${code}): ${logTail(home)}`)
    await sleep(50)
  }
  throw new DaemonNotRunningError(`the amesh daemon for ${home} did not start within ${timeout} ms: ${logTail(home)}`)
}

/** Start `amesh up --detach` for a home (it follows the home's config and the environment). */
export async function startDetached (home: string, extraArgs: string[] = []): Promise<void> {
  const child = spawn(process.execPath, [BIN, 'up', '--detach', '--home', home, ...extraArgs], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)))
  if (code !== 0) throw new DaemonNotRunningError(stderr.trim() || `amesh up --detach failed with exit ${code}`)
}

/** Connect to the home's running daemon; never starts one (read-only commands). */
export async function connectRunning (home: string): Promise<ControlClient> {
  try {
    return await ControlClient.connect(homePaths(home).socket)
  } catch (err) {
    if (!(err instanceof DaemonNotRunningError)) throw err
    assertInitialised(home)
    throw new DaemonNotRunningError(`amesh is not running for ${home} (start it with \`amesh up --home ${home}\`)`, { cause: err })
  }
}

/**
 * Connect to the home's daemon, starting it detached when none runs — only on
 * an initialised home (see home.ts): a missing or never set up home is an error.
 */
export async function connectOrStart (home: string): Promise<ControlClient> {
  const sock = homePaths(home).socket
  try {
    return await ControlClient.connect(sock)
  } catch (err) {
    if (!(err instanceof DaemonNotRunningError)) throw err
  }
  assertInitialised(home)
  await startDetached(home)
  return await ControlClient.connect(sock)
}

async function callWith<K extends CallName> (client: ControlClient, method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
  try {
    return await client.call(method, ...params)
  } finally {
    client.close()
  }
}

/** One request to the home's daemon (started when none runs on an initialised home); the connection is closed after. */
export async function callDaemon<K extends CallName> (home: string, method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
  return await callWith(await connectOrStart(home), method, ...params)
}

/** One read-only request: never starts a daemon (DaemonNotRunningError when none runs). */
export async function queryDaemon<K extends CallName> (home: string, method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
  return await callWith(await connectRunning(home), method, ...params)
}
