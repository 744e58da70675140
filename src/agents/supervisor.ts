// One managed node's process: started in its own process group, output
// captured, restarted by policy with backoff inside a window, checked by an
// optional heartbeat deadline, stopped with SIGTERM then SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process'
import { errorMessage } from '../util/errors.js'
import type { RotatingLog } from './logs.js'
import type { AgentSpec } from './spec.js'

export type AgentState = 'running' | 'backoff' | 'stopping' | 'stopped' | 'exited' | 'failed'

export interface SupervisorOptions {
  spec: AgentSpec
  env: NodeJS.ProcessEnv
  log: RotatingLog
  /** called when the process starts (pid) or ends (undefined) */
  onPid?: (pid: number | undefined) => void
}

/** Signal a whole process group (the node's process and what it started). */
export function killGroup (pid: number, signal: NodeJS.Signals): void {
  try { process.kill(-pid, signal) } catch { /* already gone */ }
}

export class Supervisor {
  state: AgentState = 'stopped'
  pid?: number
  restarts = 0
  startedAt?: number
  lastExit?: string
  private child?: ChildProcess
  private exited?: Promise<void>
  private readonly restartTimes: number[] = []
  private backoffTimer?: NodeJS.Timeout
  private heartbeatTimer?: NodeJS.Timeout
  private unhealthy = false
  private wanted = false

  constructor (private readonly opts: SupervisorOptions) {}

  get spec (): AgentSpec { return this.opts.spec }

  start (): void {
    if (this.wanted) return
    this.wanted = true
    this.launch()
  }

  private launch (): void {
    const { spec, env, log } = this.opts
    this.unhealthy = false
    let child: ChildProcess
    try {
      child = spawn(spec.command, spec.args, { cwd: spec.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      this.onExit(null, null, `could not start ${spec.command}: ${errorMessage(err)}`)
      return
    }
    this.child = child
    let done = false
    this.exited = new Promise((resolve) => {
      const finish = (code: number | null, sig: NodeJS.Signals | null, why?: string): void => {
        if (done) return
        done = true
        this.onExit(code, sig, why)
        resolve()
      }
      child.once('exit', (code, sig) => finish(code, sig))
      child.once('error', (err) => finish(null, null, `could not start ${spec.command}: ${err.message}`))
    })
    child.stdout?.on('data', (d: Buffer) => log.write(d))
    child.stderr?.on('data', (d: Buffer) => log.write(d))
    if (child.pid === undefined) return
    this.pid = child.pid
    this.startedAt = Date.now()
    this.state = 'running'
    log.note(`started pid ${child.pid}: ${spec.command} ${spec.args.join(' ')}`)
    this.opts.onPid?.(child.pid)
    this.armHeartbeat()
  }

  /** The node reported in (`amesh agent heartbeat`): push the deadline out. */
  beat (): void {
    if (this.state === 'running') this.armHeartbeat()
  }

  private armHeartbeat (): void {
    clearTimeout(this.heartbeatTimer)
    const ms = this.opts.spec.heartbeatMs
    if (ms === undefined || ms === 0) return
    this.heartbeatTimer = setTimeout(() => this.missedHeartbeat(), ms)
    this.heartbeatTimer.unref()
  }

  private missedHeartbeat (): void {
    if (this.pid === undefined || this.state !== 'running') return
    this.unhealthy = true
    this.opts.log.note(`no heartbeat within ${this.opts.spec.heartbeatMs ?? 0} ms: stopping pid ${this.pid} as unhealthy`)
    void this.terminate(this.pid)
  }

  private onExit (code: number | null, sig: NodeJS.Signals | null, why?: string): void {
    clearTimeout(this.heartbeatTimer)
    const pid = this.pid
    if (pid !== undefined) killGroup(pid, 'SIGKILL') // what the process left behind goes with it
    this.pid = undefined
    this.child = undefined
    this.opts.onPid?.(undefined)
    this.lastExit = why ?? (sig !== null ? `killed by ${sig}` : `exit ${code ?? '?'}`)
    this.opts.log.note(`process ended: ${this.lastExit}${this.unhealthy ? ' (unhealthy)' : ''}`)
    if (!this.wanted) { this.state = 'stopped'; return }
    this.decide(this.unhealthy || why !== undefined || code !== 0 || sig !== null)
  }

  /** After an exit that nobody asked for: restart by policy, with backoff, within the window. */
  private decide (failure: boolean): void {
    const { policy, backoffMs, backoffMaxMs, maxRestarts, windowMs } = this.opts.spec.restart
    if (policy === 'never' || (policy === 'on-failure' && !failure)) {
      this.state = failure ? 'failed' : 'exited'
      return
    }
    const now = Date.now()
    while (this.restartTimes.length > 0 && now - this.restartTimes[0] > windowMs) this.restartTimes.shift()
    if (this.restartTimes.length >= maxRestarts) {
      this.state = 'failed'
      this.opts.log.note(`giving up: ${this.restartTimes.length} restarts within ${windowMs} ms (restart.max_restarts ${maxRestarts})`)
      return
    }
    const delay = Math.min(backoffMs * 2 ** this.restartTimes.length, backoffMaxMs)
    this.state = 'backoff'
    this.opts.log.note(`restarting in ${delay} ms (policy ${policy})`)
    this.backoffTimer = setTimeout(() => {
      if (!this.wanted) return
      this.restarts++
      this.restartTimes.push(Date.now())
      this.launch()
    }, delay)
  }

  /** SIGTERM to the process group, SIGKILL after the spec's stop timeout; resolves when it ended. */
  private async terminate (pid: number): Promise<void> {
    const exited = this.exited ?? Promise.resolve()
    killGroup(pid, 'SIGTERM')
    const timer = setTimeout(() => {
      this.opts.log.note(`pid ${pid} did not stop within ${this.opts.spec.stopTimeoutMs} ms: SIGKILL`)
      killGroup(pid, 'SIGKILL')
    }, this.opts.spec.stopTimeoutMs)
    await exited
    clearTimeout(timer)
  }

  /** Stop for good (until start): no restart; resolves when the process ended. */
  async stop (): Promise<void> {
    this.wanted = false
    clearTimeout(this.backoffTimer)
    clearTimeout(this.heartbeatTimer)
    const pid = this.pid
    if (pid === undefined || this.child === undefined) { this.state = 'stopped'; return }
    this.state = 'stopping'
    this.opts.log.note(`stopping pid ${pid} (SIGTERM)`)
    await this.terminate(pid)
    this.state = 'stopped'
  }
}
