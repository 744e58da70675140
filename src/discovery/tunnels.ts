// Supervised SSH tunnels of one host, remembered in the store so they come
// back after a restart. Each tunnel cycles: ask the remote amesh for its peer
// id and port (over ssh) → start the port-forward → wait until it accepts →
// dial the remote through it. When the ssh process dies, the cycle runs again
// after a backoff (1 s doubling to 30 s, reset once the tunnel is up).

import type { ChildProcess } from 'node:child_process'
import type { Libp2p } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import type { Committer, RawDb } from '../store/db.js'
import { SshJoinRecords } from '../store/ssh-joins.js'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { freePort, joinKey, queryRemote, spawnForward, waitForPort, type RemoteInfo, type SshJoinSpec } from './ssh.js'

export const TUNNEL_BACKOFF_MIN = SECOND
export const TUNNEL_BACKOFF_MAX = 30 * SECOND
const DIAL_TIMEOUT = 15 * SECOND

export type TunnelState = 'starting' | 'up' | 'backoff' | 'stopped'

export interface TunnelStatus {
  target: string
  state: TunnelState
  peerId?: string
  localPort?: number
  pid?: number
  restarts: number
  lastError?: string
}

interface Deps { libp2p: Libp2p, log: Logger }

/** One supervised tunnel to one remote host. */
export class SshTunnel {
  private state: TunnelState = 'starting'
  private child?: ChildProcess
  private localPort?: number
  private info?: RemoteInfo
  private restarts = 0
  private attempts = 0
  private lastError?: string
  private timer?: NodeJS.Timeout

  constructor (readonly spec: SshJoinSpec, private readonly deps: Deps) {}

  status (): TunnelStatus {
    return {
      target: joinKey(this.spec),
      state: this.state,
      peerId: this.info?.peerId,
      localPort: this.localPort,
      pid: this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined,
      restarts: this.restarts,
      lastError: this.lastError
    }
  }

  /** First cycle; errors are thrown to the caller (and nothing keeps running). */
  async open (): Promise<string> {
    try {
      return await this.cycle()
    } catch (err) {
      this.stop()
      throw err
    }
  }

  /** Keep trying in the background (remembered joins after a restart). */
  run (): void {
    void this.cycle().catch((err) => this.failed(err))
  }

  private async cycle (): Promise<string> {
    this.state = 'starting'
    const info = await queryRemote(this.spec)
    if (this.state !== 'starting') throw new Error('tunnel stopped')
    this.info = info
    this.localPort ??= await freePort()
    const port = this.localPort
    let exit: string | undefined
    let stderr = ''
    const child = spawnForward(this.spec, port, info.tunnelTarget)
    this.child = child
    child.stderr?.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-2000) })
    child.once('error', (err) => { exit = `ssh: ${err.message}` })
    child.once('exit', (code, sig) => {
      exit = `ssh port-forward exited (${code ?? sig ?? '?'})${stderr.trim() !== '' ? `: ${stderr.trim().split('\n').slice(-2).join(' | ')}` : ''}`
      if (this.child === child) this.onExit(exit)
    })
    await waitForPort(port, () => exit)
    const addr = multiaddr(`/ip4/127.0.0.1/tcp/${port}/p2p/${info.peerId}`)
    await this.deps.libp2p.dial(addr, { signal: AbortSignal.timeout(DIAL_TIMEOUT) })
    if (exit !== undefined) throw new Error(exit)
    this.state = 'up'
    this.attempts = 0
    this.lastError = undefined
    this.deps.log(`ssh tunnel to ${this.spec.destination} up: 127.0.0.1:${port} → ${info.tunnelTarget.host}:${info.tunnelTarget.port} (${info.peerId}), ssh pid ${child.pid ?? '?'}`)
    return info.peerId
  }

  private onExit (why: string): void {
    if (this.state === 'stopped') return
    this.deps.log(`ssh tunnel to ${this.spec.destination}: ${why}`)
    if (this.state === 'up') this.failed(new Error(why))
    // while starting, the cycle itself sees the exit and fails
  }

  private failed (err: unknown): void {
    if (this.state === 'stopped') return
    this.lastError = errorMessage(err)
    this.killChild()
    if (/address already in use|forwarding failed|cannot listen/i.test(this.lastError)) this.localPort = undefined
    const delay = Math.min(TUNNEL_BACKOFF_MAX, TUNNEL_BACKOFF_MIN * 2 ** this.attempts++)
    this.state = 'backoff'
    this.deps.log(`ssh tunnel to ${this.spec.destination}: ${this.lastError}; retrying in ${delay} ms`)
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      if (this.state !== 'backoff') return
      this.restarts++
      void this.cycle().catch((e) => this.failed(e))
    }, delay)
    this.timer.unref()
  }

  private killChild (): void {
    const child = this.child
    this.child = undefined
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  }

  stop (): void {
    this.state = 'stopped'
    clearTimeout(this.timer)
    this.killChild()
  }
}

/** The host's ssh joins: stored, started at boot, listed for `amesh join --tunnels`. */
export class SshJoins {
  private readonly tunnels = new Map<string, SshTunnel>()
  private readonly records: SshJoinRecords

  constructor (db: RawDb, committer: Committer, private readonly deps: Deps) {
    this.records = new SshJoinRecords(db, committer)
  }

  /** Start every remembered join in the background. */
  async resume (): Promise<void> {
    const skip = (err: unknown): void => this.deps.log(`ssh joins: skipping a stored join: ${errorMessage(err)}`)
    for await (const stored of this.records.all(skip)) {
      try {
        const spec = stored as SshJoinSpec
        if (this.tunnels.has(joinKey(spec))) continue
        const t = new SshTunnel(spec, this.deps)
        this.tunnels.set(joinKey(spec), t)
        t.run()
      } catch (err) {
        skip(err)
      }
    }
  }

  /** Join now (errors reach the caller), then supervise and remember it. */
  async join (spec: SshJoinSpec): Promise<TunnelStatus> {
    const key = joinKey(spec)
    this.tunnels.get(key)?.stop()
    const t = new SshTunnel(spec, this.deps)
    await t.open()
    this.tunnels.set(key, t)
    await this.records.put(key, spec)
    return t.status()
  }

  /** Stop a tunnel and forget the join. */
  async leave (key: string): Promise<boolean> {
    const t = this.tunnels.get(key)
    t?.stop()
    this.tunnels.delete(key)
    await this.records.delete(key)
    return t !== undefined
  }

  list (): TunnelStatus[] {
    return [...this.tunnels.values()].map((t) => t.status())
  }

  stop (): void {
    for (const t of this.tunnels.values()) t.stop()
  }
}
