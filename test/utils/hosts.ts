// Real hosts for tests: each a separate `bin/amesh up` process with its own
// temp home, listening on loopback only (mDNS is off for the test process).
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ControlClient } from '../../src/control/client.js'

export const ROOT = resolve(new URL('../../..', import.meta.url).pathname)
export const BIN = join(ROOT, 'bin', 'amesh')

export interface RunResult { code: number, stdout: string, stderr: string }

/** Run `bin/amesh ARGS` and collect its output (never rejects on a non-zero exit). */
export async function amesh (args: string[], opts: { input?: string | Uint8Array, env?: NodeJS.ProcessEnv, timeout?: number } = {}): Promise<RunResult> {
  return await new Promise((resolvePromise) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: opts.env ?? process.env, timeout: opts.timeout ?? 60_000, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : (typeof err.code === 'number' ? err.code : 1)
      resolvePromise({ code, stdout, stderr })
    })
    if (opts.input !== undefined) child.stdin?.end(opts.input)
  })
}

/** Run and require exit 0; returns stdout. */
export async function ok (args: string[], opts: { input?: string, env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const r = await amesh(args, opts)
  if (r.code !== 0) throw new Error(`amesh ${args.join(' ')} exited ${r.code}: ${r.stderr}`)
  return r.stdout
}

export function jsonLines<T = Record<string, unknown>> (text: string): T[] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T)
}

export interface TestHost {
  home: string
  peerId: string
  addr: string
  pid: number
  /** run amesh with --home for this host */
  run: (args: string[], opts?: { input?: string }) => Promise<RunResult>
  ok: (args: string[], opts?: { input?: string }) => Promise<string>
  client: () => Promise<ControlClient>
  start: (extra?: string[]) => Promise<void>
  stop: () => Promise<void>
  kill9: () => void
  cleanup: () => Promise<void>
}

export interface HostOptions { peers?: string[], config?: Record<string, unknown>, extra?: string[], /** an existing empty directory to use as the home (default: a new temp dir) */ home?: string }

function writeConfig (home: string, config: Record<string, unknown>): void {
  const merged = { listen: ['/ip4/127.0.0.1/tcp/0'], ...config }
  writeFileSync(join(home, 'config.yaml'), JSON.stringify(merged) + '\n')
}

/**
 * Whether `pid` is still the daemon of `home` (its command line says `up ... --home HOME`).
 * A pid is reused once its process is gone (pid_max is 32,768 on the test machine and
 * every thread takes one), so a kill -9 sent to a daemon that has exited could hit
 * another file's process in a parallel run; without /proc the check cannot tell.
 */
function isDaemonOf (pid: number, home: string): boolean {
  if (pid <= 0) return false
  let args: string[]
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return !existsSync('/proc/self')
  }
  const at = args.indexOf('--home')
  return args.includes('up') && at >= 0 && resolve(args[at + 1] ?? '') === resolve(home)
}

/** Make a home and start a detached daemon in it. */
export async function startHost (opts: HostOptions = {}): Promise<TestHost> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'am-'))
  writeConfig(home, opts.config ?? {})
  const h: TestHost = {
    home,
    peerId: '',
    addr: '',
    pid: 0,
    run: async (args, o) => await amesh([...args, '--home', home], o),
    ok: async (args, o) => await ok([...args, '--home', home], o),
    client: async () => await ControlClient.connect(join(home, 'amesh.sock')),
    start: async (extra = []) => {
      const peerArgs = (opts.peers ?? []).flatMap((p) => ['--peer', p])
      const out = JSON.parse(await ok(['up', '--detach', '--json', '--home', home, ...peerArgs, ...(opts.extra ?? []), ...extra])) as { pid: number, peerId: string, addrs: string[] }
      h.pid = out.pid
      h.peerId = out.peerId
      h.addr = out.addrs.find((a) => a.includes('/ip4/127.0.0.1/')) ?? out.addrs[0]
      // keep the same port across restarts, so peers that know this address reach it again
      const port = /\/tcp\/(\d+)/.exec(h.addr)?.[1]
      if (port !== undefined) writeConfig(home, { ...(opts.config ?? {}), listen: [`/ip4/127.0.0.1/tcp/${port}`] })
    },
    stop: async () => { await amesh(['down', '--home', home]) },
    kill9: () => { if (isDaemonOf(h.pid, home)) try { process.kill(h.pid, 'SIGKILL') } catch { /* gone */ } },
    cleanup: async () => {
      await h.stop().catch(() => {})
      h.kill9()
      rmSync(home, { recursive: true, force: true })
    }
  }
  await h.start()
  return h
}

/** Create node `a` on host `ha` and node `b` on host `hb`, and wait until each host holds the other node's card. */
export async function meetNodes (ha: TestHost, a: string, hb: TestHost, b: string): Promise<void> {
  await ha.ok(['node', 'add', a])
  await hb.ok(['node', 'add', b])
  await waitFor(async () => (await hb.ok(['nodes', '--json'])).includes(`"${a}"`), 20_000, `the second host to learn ${a}`)
  await waitFor(async () => (await ha.ok(['nodes', '--json'])).includes(`"${b}"`), 20_000, `the first host to learn ${b}`)
}

/** Poll until check() returns a truthy value, or fail after the deadline. */
export async function waitFor<T> (check: () => Promise<T | undefined | false>, timeout = 20_000, what = 'condition', every = 100): Promise<T> {
  const deadline = Date.now() + timeout
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const v = await check()
      if (v !== undefined && v !== false) return v
    } catch (err) {
      last = err
    }
    await new Promise((r) => setTimeout(r, every))
  }
  throw new Error(`timed out waiting for ${what}${last !== undefined ? `: ${String(last)}` : ''}`)
}

export function readLog (h: TestHost): string {
  try { return readFileSync(join(h.home, 'amesh.log'), 'utf8') } catch { return '' }
}

/** Spawn a long-running amesh process (e.g. inbox --follow); caller kills it. */
export function spawnAmesh (args: string[]) {
  return spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
}
