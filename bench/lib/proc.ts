// Parent side of bench workers: spawn `node --import <polyfill> <script>`,
// talk over IPC, read RSS from /proc, and never leave a child behind.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { Json, JsonObject } from './types.js'

/** Message shape both directions: a type tag and a JSON body. */
export interface WorkerMessage {
  type: string
  data?: JsonObject
  message?: string
}

export function isWorkerMessage (value: unknown): value is WorkerMessage {
  if (typeof value !== 'object' || value === null) return false
  return typeof (value as { type?: unknown }).type === 'string'
}

export const POLYFILL = fileURLToPath(new URL('../../src/polyfill.js', import.meta.url))
export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** Absolute path of a compiled worker in dist/bench/workers. */
export function workerScript (name: string): string {
  return fileURLToPath(new URL(`../workers/${name}.js`, import.meta.url))
}

const live = new Set<ChildProcess>()

function killAll (): void {
  for (const child of live) child.kill('SIGKILL')
  live.clear()
}

let hooked = false
function hookExit (): void {
  if (hooked) return
  hooked = true
  process.on('exit', killAll)
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => { killAll(); process.exit(130) })
  }
}

/** RSS of any process in bytes from /proc/<pid>/status, or undefined. */
export async function rssOf (pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

interface Waiter {
  type: string
  resolve: (msg: WorkerMessage) => void
  reject: (err: Error) => void
  timer: NodeJS.Timeout
}

export interface Worker {
  readonly pid: number
  /** Next message of this type (earlier unmatched ones are kept). */
  next: (type: string, timeoutMs?: number) => Promise<WorkerMessage>
  send: (msg: WorkerMessage) => void
  rss: () => Promise<number | undefined>
  stop: () => Promise<void>
}

class WorkerProcess implements Worker {
  private readonly inbox: WorkerMessage[] = []
  private readonly waiters: Waiter[] = []
  private exited: Error | undefined
  private readonly exitPromise: Promise<void>

  constructor (private readonly child: ChildProcess, private readonly label: string) {
    child.on('message', (raw: unknown) => { if (isWorkerMessage(raw)) this.deliver(raw) })
    // a send to a child that is exiting fails with EPIPE: its exit is reported by 'exit'
    child.on('error', () => {})
    this.exitPromise = new Promise(resolve => {
      child.on('exit', (code, signal) => {
        live.delete(child)
        this.fail(new Error(`${label} exited (code ${String(code)}, signal ${String(signal)})`))
        resolve()
      })
    })
  }

  get pid (): number { return this.child.pid ?? -1 }

  private deliver (msg: WorkerMessage): void {
    if (msg.type === 'error') {
      this.fail(new Error(`${this.label}: ${msg.message ?? 'unknown error'}`))
      return
    }
    const i = this.waiters.findIndex(w => w.type === msg.type)
    if (i < 0) { this.inbox.push(msg); return }
    const [w] = this.waiters.splice(i, 1)
    clearTimeout(w.timer)
    w.resolve(msg)
  }

  private fail (err: Error): void {
    this.exited ??= err
    for (const w of this.waiters.splice(0)) { clearTimeout(w.timer); w.reject(err) }
  }

  async next (type: string, timeoutMs = 120_000): Promise<WorkerMessage> {
    const i = this.inbox.findIndex(m => m.type === type)
    if (i >= 0) return this.inbox.splice(i, 1)[0]
    if (this.exited !== undefined) throw this.exited
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const at = this.waiters.findIndex(w => w.timer === timer)
        if (at >= 0) this.waiters.splice(at, 1)
        reject(new Error(`${this.label}: no '${type}' within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.push({ type, resolve, reject, timer })
    })
  }

  send (msg: WorkerMessage): void {
    if (this.child.connected) this.child.send(msg)
  }

  async rss (): Promise<number | undefined> {
    return await rssOf(this.pid)
  }

  async stop (): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    this.send({ type: 'stop' })
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000)
    await this.exitPromise
    clearTimeout(timer)
  }
}

/**
 * Start `node --import <polyfill> <script> <json args>` with an IPC channel.
 * The child's stderr goes to ours; stdout is ignored (workers use IPC).
 */
export function spawnWorker (script: string, args: JsonObject = {}): Worker {
  hookExit()
  const child = spawn(process.execPath, ['--import', POLYFILL, script, JSON.stringify(args)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc']
  })
  live.add(child)
  const name = script.split('/').pop() ?? script
  return new WorkerProcess(child, `worker ${name}`)
}

/** Read a number field from a worker message body, or throw. */
export function numField (msg: WorkerMessage, key: string): number {
  const v: Json | undefined = msg.data?.[key]
  if (typeof v !== 'number') throw new Error(`message '${msg.type}' lacks number '${key}'`)
  return v
}

/** Read a number-array field from a worker message body, or throw. */
export function numsField (msg: WorkerMessage, key: string): number[] {
  const v: Json | undefined = msg.data?.[key]
  if (!Array.isArray(v) || !v.every(x => typeof x === 'number')) {
    throw new Error(`message '${msg.type}' lacks number[] '${key}'`)
  }
  return v as number[]
}

/** Read a string field from a worker message body, or throw. */
export function strField (msg: WorkerMessage, key: string): string {
  const v: Json | undefined = msg.data?.[key]
  if (typeof v !== 'string') throw new Error(`message '${msg.type}' lacks string '${key}'`)
  return v
}
