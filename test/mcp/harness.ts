// Test harness for the Claude Code face: real hosts started with bin/amesh on
// loopback, and MCP sessions spawned through the SDK's StdioClientTransport
// exactly as Claude Code spawns them.
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult, ClientNotification } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'

export const BIN = fileURLToPath(new URL('../../../bin/amesh', import.meta.url))

/** A fresh home on loopback (never the default 0.0.0.0:4747), short enough for a Unix socket path. */
export function makeHome (): string {
  const home = mkdtempSync(join(tmpdir(), 'am-'))
  writeFileSync(join(home, 'config.yaml'), 'listen: ["/ip4/127.0.0.1/tcp/0"]\n')
  return home
}

/** Run the CLI; resolves with stdout, rejects with stderr on a non-zero exit. */
export async function amesh (args: string[], opts: { cwd?: string, input?: string } = {}): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: process.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`amesh ${args.join(' ')}: ${stderr.trim() || err.message}`))
      else resolve(stdout)
    })
    if (opts.input !== undefined) child.stdin?.end(opts.input)
  })
}

export async function startHost (home: string, peer?: string): Promise<string> {
  await amesh(['up', '--detach', '--home', home, ...(peer === undefined ? [] : ['--peer', peer])])
  const id = JSON.parse(await amesh(['id', '--json', '--home', home])) as { addrs: string[] }
  return id.addrs[0]
}

export async function stopHost (home: string): Promise<void> {
  await amesh(['down', '--home', home]).catch(() => {})
  rmSync(home, { recursive: true, force: true })
}

export async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** Poll until `check` returns a value other than undefined, or fail after the deadline. */
export async function until<T> (what: string, check: () => Promise<T | undefined> | T | undefined, timeout = 20_000): Promise<T> {
  const deadline = Date.now() + timeout
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

export interface Packet {
  seq: number
  id: string
  from: string
  from_id: string
  to: string
  signal: string
  payload: { text?: string, options?: string[], result?: string, context?: string }
  conversation_id?: string
  in_reply_to?: string
}

export async function inbox (home: string, node: string, after = 0): Promise<Packet[]> {
  const out = await amesh(['inbox', node, '--after', String(after), '--json', '--home', home])
  return out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Packet)
}

export interface InboxInfo { last: number, cursor: number, unacked: number }

export async function inboxInfo (home: string, node: string): Promise<InboxInfo | undefined> {
  const s = JSON.parse(await amesh(['status', '--json', '--home', home])) as { nodes: Array<{ name: string, inbox: InboxInfo }> }
  return s.nodes.find((n) => n.name === node)?.inbox
}

/** Wait until the node's inbox holds at least `last` packets and all are acked, then a grace period for strays. */
export async function drained (home: string, node: string, last: number, grace = 500): Promise<void> {
  await until(`${node} to ack ${last} packets`, async () => {
    const info = await inboxInfo(home, node)
    return info !== undefined && info.last >= last && info.unacked === 0 ? true : undefined
  })
  await sleep(grace)
}

const ChannelSchema = z.object({
  method: z.literal('notifications/claude/channel'),
  params: z.object({ content: z.string(), meta: z.record(z.unknown()).optional() })
})
const PermissionSchema = z.object({
  method: z.literal('notifications/claude/channel/permission'),
  params: z.object({ request_id: z.string(), behavior: z.string() })
})

export interface ChannelNotification { content: string, meta?: Record<string, unknown> }

/** One MCP session, as Claude Code would run it. */
export class Session {
  readonly channel: ChannelNotification[] = []
  readonly permission: Array<{ request_id: string, behavior: string }> = []
  /** every notification method received, in order */
  readonly methods: string[] = []
  stderr = ''

  private constructor (readonly client: Client, readonly transport: StdioClientTransport) {}

  static async start (home: string, args: string[], command: { command: string, args: string[] } = { command: process.execPath, args: [BIN, 'mcp', ...args, '--home', home] }): Promise<Session> {
    const transport = new StdioClientTransport({
      command: command.command,
      args: command.args,
      env: { AMESH_MDNS: 'off', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), AMESH_HOME: home },
      stderr: 'pipe'
    })
    const client = new Client({ name: 'amesh-test', version: '0.0.0' })
    const session = new Session(client, transport)
    transport.stderr?.on('data', (d: Buffer) => { session.stderr += d.toString() })
    client.setNotificationHandler(ChannelSchema, (n) => { session.methods.push(n.method); session.channel.push(n.params) })
    client.setNotificationHandler(PermissionSchema, (n) => { session.methods.push(n.method); session.permission.push(n.params) })
    client.fallbackNotificationHandler = async (n) => { session.methods.push(n.method) }
    await client.connect(transport)
    return session
  }

  async tool (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    return await this.client.callTool({ name, arguments: args }) as CallToolResult
  }

  /** Play Claude Code: send a custom notification (e.g. a permission_request). */
  async notify (method: string, params: Record<string, unknown>): Promise<void> {
    await this.client.notification({ method, params } as unknown as ClientNotification)
  }

  async waitChannel (n: number, timeout = 20_000): Promise<ChannelNotification[]> {
    await until(`${n} channel notifications (have ${this.channel.length}; stderr: ${this.stderr.slice(-500)})`, () => this.channel.length >= n ? true : undefined, timeout)
    return this.channel
  }

  /** kill -9 the MCP process (a crash), then drop the client. */
  async kill (): Promise<void> {
    const pid = this.transport.pid
    if (pid !== null) process.kill(pid, 'SIGKILL')
    await this.client.close().catch(() => {})
  }

  async close (): Promise<void> {
    await this.client.close().catch(() => {})
  }
}

export function textOf (r: CallToolResult): string {
  return r.content.map((c) => c.type === 'text' ? c.text : '').join('')
}

/** Spawn a process raw, feed it `input`, and return its stdout once it has written `lines` lines (for the stdout-purity check). */
export async function rawStdout (args: string[], input: string, env: Record<string, string>, lines: number): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'ignore'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d })
  child.stdin.write(input)
  try {
    await until(`${lines} lines on stdout`, () => out.split('\n').length > lines ? true : undefined)
  } finally {
    child.stdin.end()
    await new Promise((resolve) => child.on('exit', resolve))
  }
  return out
}
