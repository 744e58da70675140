// The ACP agent process: spawned over stdio (in the bridge's process group,
// so the supervisor's stop reaches it), driven through the official SDK's
// client side. amesh is the ACP client; the agent's requests are answered by
// the handlers the bridge passes in.
import { spawn, type ChildProcess } from 'node:child_process'
import { Readable, Writable } from 'node:stream'
import {
  PROTOCOL_VERSION, client, methods, ndJsonStream,
  type ClientConnection, type InitializeResponse, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification
} from '@agentclientprotocol/sdk'
import type { BridgeConfig } from './config.js'
import { AcpAgentError } from './errors.js'
import type { Sandbox } from './files.js'

export interface AgentHandlers {
  update: (n: SessionNotification) => void
  permission: (req: RequestPermissionRequest) => Promise<RequestPermissionResponse>
  sandbox: Sandbox
}

/** An ACP error's message with its data (the agent's own words), for logs and ERROR reasons. */
export function acpError (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const data = (err as { data?: unknown }).data
  if (data === undefined || data === null) return err.message
  const detail = typeof data === 'string' ? data : JSON.stringify(data)
  return `${err.message}: ${detail.slice(0, 1000)}`
}

export class AgentProcess {
  /** why the process ended (resolves once, when it did) */
  readonly ended: Promise<string>
  endReason?: string

  private constructor (readonly child: ChildProcess, readonly conn: ClientConnection, readonly info: InitializeResponse, ended: Promise<string>) {
    this.ended = ended
    void ended.then((r) => { this.endReason = r })
  }

  get pid (): number | undefined { return this.child.pid }
  get canLoad (): boolean { return this.info.agentCapabilities?.loadSession === true }

  /** Start the agent and run `initialize` (protocol version 1). */
  static async start (cfg: BridgeConfig, h: AgentHandlers, version: string): Promise<AgentProcess> {
    const child = spawn(cfg.command, cfg.args, { cwd: cfg.cwd, env: process.env, stdio: ['pipe', 'pipe', 'inherit'] })
    const ended = new Promise<string>((resolve) => {
      child.once('exit', (code, sig) => resolve(sig !== null ? `killed by ${sig}` : `exit ${code ?? '?'}`))
      child.once('error', (err) => resolve(`could not start ${cfg.command}: ${err.message}`))
    })
    if (child.stdin === null || child.stdout === null) throw new AcpAgentError('the agent process has no stdio')
    const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
    const app = client({ name: 'amesh' })
      .onNotification(methods.client.session.update, ({ params }) => { h.update(params) })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => await h.permission(params))
      .onRequest(methods.client.fs.readTextFile, ({ params }) => h.sandbox.read(params))
      .onRequest(methods.client.fs.writeTextFile, ({ params }) => h.sandbox.write(params))
    const conn = app.connect(stream)
    void ended.then((why) => conn.close(new AcpAgentError(`the agent process ended: ${why}`)))
    const init = conn.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: cfg.fs !== 'none', writeTextFile: cfg.fs === 'read-write' }, terminal: false },
      clientInfo: { name: 'amesh', version }
    })
    const info = await Promise.race([init, ended.then((why) => { throw new AcpAgentError(`the agent process ended before initialize: ${why}`) })])
    if (info.protocolVersion !== PROTOCOL_VERSION) {
      child.kill('SIGKILL')
      throw new AcpAgentError(`${cfg.command} speaks ACP protocol version ${info.protocolVersion}; amesh speaks ${PROTOCOL_VERSION}`)
    }
    return new AgentProcess(child, conn, info, ended)
  }

  /** End the agent (and what it started in this group is ended by the supervisor). */
  kill (): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL')
  }
}
