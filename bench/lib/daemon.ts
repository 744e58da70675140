// amesh daemons for the T measurements: each host is a real `amesh up`
// process (foreground, our child) with its own home, driven through its
// control socket. Children are killed if the runner exits.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ControlClient, RemoteError } from '../../src/control/client.js'
import { eachFollowEntry } from '../../src/control/follow-frames.js'
import { daemonEnv, daemonNodeFlags } from '../../src/host/heap.js'
import { waitFor } from './cli.js'
import { cpuMsOf } from './cpu.js'
import { rssOf } from './proc.js'
import { nowMs } from './stats.js'
import type { BenchContext } from './types.js'

export type Durability = 'always' | 'batch' | 'none'

export interface DaemonOptions {
  durability?: Durability
  /** bootstrap peers (multiaddrs with /p2p/) */
  peers?: string[]
  /** extra node flags for this daemon (e.g. --cpu-prof) */
  nodeArgs?: string[]
  /** run inside this network namespace (`ip netns exec`; the control socket is a file, reached from outside) */
  netns?: string
  /** listen address (default /ip4/127.0.0.1/tcp/0) */
  listen?: string
  /** extra config.yaml lines (e.g. relay settings, the A2A face's `a2a: {listen: …}`) */
  config?: string[]
}

/** A packet as the control socket renders it (the fields the bench uses). */
export interface Rendered { seq: number, id: string, from: string, to: string }

export interface NodeRow { name: string, id: string, host: string, local: boolean }

interface StatusNode { name: string, inbox: { last: number, cursor: number, unacked: number } | { error: string } }
export interface Status { pid: number, peers: string[], nodes: StatusNode[], outbox: { queued: number, dead: number } }

/** How long a live daemon may take to open its control socket (session 9: 30 hosts on 2 cores outran 60 s). */
const START_WAIT_MS = 180_000

const live = new Set<ChildProcess>()
let hooked = false
function hookExit (): void {
  if (hooked) return
  hooked = true
  process.on('exit', () => { for (const c of live) c.kill('SIGKILL') })
}

/**
 * Extra node flags for every daemon, from AMESH_BENCH_NODE_ARGS (space
 * separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the hosts.
 */
function envNodeArgs (): string[] {
  return (process.env.AMESH_BENCH_NODE_ARGS ?? '').split(' ').filter((s) => s !== '')
}

export class Daemon {
  private exited = false
  private readonly exitPromise: Promise<void>
  peerId = ''
  addrs: string[] = []

  private constructor (readonly label: string, readonly home: string, private readonly child: ChildProcess, public client: ControlClient | undefined) {
    this.exitPromise = new Promise((resolve) => {
      child.on('exit', () => { this.exited = true; live.delete(child); resolve() })
    })
  }

  get pid (): number { return this.child.pid ?? -1 }
  get socket (): string { return join(this.home, 'amesh.sock') }
  get addr (): string { return this.addrs[0] }

  get control (): ControlClient {
    if (this.client === undefined) throw new Error(`${this.label}: not connected`)
    return this.client
  }

  static async start (ctx: BenchContext, label: string, opts: DaemonOptions = {}): Promise<Daemon> {
    hookExit()
    const home = await ctx.tmpDir(label)
    await mkdir(home, { recursive: true, mode: 0o700 })
    const cfg = [`listen: ["${opts.listen ?? '/ip4/127.0.0.1/tcp/0'}"]`, 'mdns: false', `durability: ${opts.durability ?? 'batch'}`, ...(opts.config ?? [])]
    await writeFile(join(home, 'config.yaml'), cfg.join('\n') + '\n')
    const log = await open(join(home, 'amesh.log'), 'a')
    // the node flags `up --detach` gives a daemon (src/host/heap.ts), unless the run chose its own
    const extra = [...envNodeArgs(), ...(opts.nodeArgs ?? [])]
    const args = [...daemonNodeFlags(extra), ...extra, join(ctx.root, 'bin', 'amesh'), 'up', '--home', home]
    for (const p of opts.peers ?? []) args.push('--peer', p)
    const child = spawn(opts.netns === undefined ? process.execPath : 'ip', opts.netns === undefined ? args : ['netns', 'exec', opts.netns, process.execPath, ...args], {
      stdio: ['ignore', log.fd, log.fd],
      // and the environment it gives one (malloc's trim threshold), unless the run's environment set its own
      env: { ...process.env, ...daemonEnv(), AMESH_MDNS: 'off' }
    })
    await log.close()
    live.add(child)
    const d = new Daemon(label, home, child, undefined)
    // a daemon that exits fails the wait at once; one that is alive but slow (30 hosts starting
    // on 2 cores, T7/T8.30) is waited for, up to START_WAIT_MS
    d.client = await waitFor(async () => {
      if (d.exited) throw new Error(`${label}: amesh up exited during start (see ${home}/amesh.log)`)
      try { return await ControlClient.connect(d.socket) } catch { return undefined }
    }, START_WAIT_MS, 25)
    const id = await d.control.call('id')
    d.peerId = id.peerId
    d.addrs = id.addrs
    return d
  }

  /** A second control connection (for a stream that runs beside calls). */
  async connect (): Promise<ControlClient> {
    return await ControlClient.connect(this.socket)
  }

  async ensureNode (name: string): Promise<string> {
    const r = await this.control.call('node.ensure', { name })
    return r.id
  }

  /**
   * Node `as` on this host grants `to` (any node, resolved by name) every
   * signal, so `to` may send to it (the access matrix denies ungranted
   * senders). Waits until the grant reached the audience's host.
   */
  async grant (as: string, to: string): Promise<void> {
    await waitFor(async () => {
      const r = await this.control.call('grant', { as, to })
      return r.handed ? true : undefined
    }, 30_000, 250)
  }

  async status (): Promise<Status> {
    return await this.control.call('status')
  }

  /**
   * The node's last inbox seq, from `inbox.state`: the bursts poll it every
   * 10 ms, and `status` (store size from the file system, memory, addresses,
   * peers) cost the polled daemon 200-400 µs of CPU a call against ~80 µs
   * (docs/PERFORMANCE.md, session 20). A node the daemon does not serve (yet) is 0.
   */
  async inboxLast (node: string): Promise<number> {
    try {
      return (await this.control.call('inbox.state', { node })).last
    } catch (err) {
      if (err instanceof RemoteError && err.code === 'UNKNOWN_NODE') return 0
      throw err
    }
  }

  async nodes (): Promise<NodeRow[]> {
    return await this.control.call('nodes')
  }

  /** Wait until this host knows a remote node of that name (its card arrived). */
  async waitKnows (name: string, timeoutMs = 30_000): Promise<void> {
    await waitFor(async () => (await this.nodes()).some((n) => !n.local && n.name === name) ? true : undefined, timeoutMs)
  }

  async rss (): Promise<number | undefined> {
    return await rssOf(this.pid)
  }

  /**
   * CPU time (user + system, ms) the daemon process has used so far, from
   * /proc (undefined where there is none). Differences of it measure work
   * per entry, which a loaded machine disturbs far less than wall time.
   */
  async cpuMs (): Promise<number | undefined> {
    return await cpuMsOf(this.pid)
  }

  async stop (): Promise<void> {
    if (this.exited) return
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000)
    try {
      await this.client?.call('shutdown').catch(() => {})
      this.client?.close()
      this.client = undefined
      await this.exitPromise
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Start several daemons, at most `parallel` starting at once. */
export async function startMany (ctx: BenchContext, labels: string[], opts: (i: number) => DaemonOptions, parallel = 4): Promise<Daemon[]> {
  const out: Daemon[] = new Array<Daemon>(labels.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < labels.length) {
      const i = next++
      out[i] = await Daemon.start(ctx, labels[i], opts(i))
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(parallel, labels.length) }, worker))
  } catch (err) {
    await stopAll(out.filter((d) => d !== undefined))
    throw err
  }
  return out
}

export async function stopAll (daemons: Daemon[]): Promise<void> {
  await Promise.all(daemons.map(async (d) => { await d.stop() }))
}

/**
 * Text of `size` ASCII characters, varying with `i` (the packet payload).
 * The bursts (sendMany, sendManyBatched) build one per burst and send it
 * every time, as the raw stream's initiator writes one buffer: a fresh
 * 64 KiB string per send (and its flattening) cost the bench process
 * 30-70 µs per T3 send, most of it GC (docs/PERFORMANCE.md, session 20).
 * Packets differ by their ids; nothing reads the texts back.
 */
export function text (size: number, i = 0): string {
  const head = `${i}:`
  return head + 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(size / 36)).slice(0, Math.max(0, size - head.length))
}

/**
 * Send `count` packets from `as` to `to` through a control connection, with
 * up to `window` calls in flight. Resolves when every send is durable in the
 * sender's outbox (or the local inbox). Returns the ids in order.
 */
/** A tool's hook into sendMany: called on each reply (e.g. to count the burst's progress). */
export interface SendHooks { onReply?: () => void }

export async function sendMany (client: ControlClient, as: string, to: string, count: number, size: number, window = 512, hooks: SendHooks = {}): Promise<string[]> {
  const ids = new Array<string>(count)
  const body = text(size)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      const r = await client.call('send', { as, to, text: body })
      ids[i] = r.id
      hooks.onReply?.()
    }
  }
  await Promise.all(Array.from({ length: Math.min(window, count) }, lane))
  return ids
}

/**
 * As sendMany, through `send.batch`: calls of `batch` sends each, up to
 * `window` sends in flight (window / batch calls). Returns the ids in order.
 */
export async function sendManyBatched (client: ControlClient, as: string, to: string, count: number, size: number, window = 512, batch = 256): Promise<string[]> {
  const ids = new Array<string>(count)
  const body = text(size)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < count) {
      const first = next
      const n = Math.min(batch, count - first)
      next += n
      const sends = Array.from({ length: n }, () => ({ as, to, text: body }))
      const r = await client.call('send.batch', { sends })
      r.results.forEach((x, k) => {
        if ('error' in x) throw new Error(`send.batch entry ${first + k}: ${x.error.code}: ${x.error.message}`)
        ids[first + k] = x.id
      })
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(Math.floor(window / batch), Math.ceil(count / batch))) }, lane))
  return ids
}

/**
 * Follow a node's inbox on a daemon on its own control connection. Each
 * event is passed with its arrival time; `close()` ends the stream.
 */
export async function followInbox (d: Daemon, node: string, after: number, onEvent: (e: Rendered, at: number) => void, framing: 'ndjson' | 'binary' = 'ndjson'): Promise<{ close: () => void, done: Promise<void> }> {
  const client = await d.connect()
  const done = (framing === 'binary'
    // what `amesh inbox --follow` does: binary pages rendered in the client
    ? client.frames('inbox.follow', { node, after }, (body) => { const at = nowMs(); for (const e of eachFollowEntry(body)) onEvent(e, at) })
    : client.stream('inbox.follow', { node, after }, (e) => { onEvent(e as Rendered, nowMs()) })).catch(() => {})
  return { close: () => client.close(), done }
}

/** Wait until a node's inbox on `d` reaches `last` (polls status); returns the time it was seen. */
export async function waitInbox (d: Daemon, node: string, last: number, timeoutMs = 120_000): Promise<number> {
  return await waitFor(async () => (await d.inboxLast(node)) >= last ? nowMs() : undefined, timeoutMs, 10)
}
