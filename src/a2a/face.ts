// The A2A face (issue 13; docs/A2A.md): an HTTP(S) server speaking A2A 1.0
// through the official SDK, and a client of the daemon's control contract and
// nothing more. The daemon starts it in its own process when `a2a:` is set
// (src/host/daemon.ts) and hands it its method table: calls are answered in
// the process (in-process.ts), streams over the control socket.
import { readFileSync } from 'node:fs'
import { createServer as createHttp, type Server } from 'node:http'
import { createServer as createHttps } from 'node:https'
import type { AddressInfo } from 'node:net'
import { ControlClient } from '../control/client.js'
import type { MethodTable } from '../control/server.js'
import type { Logger } from '../util/log.js'
import { InboxFollower } from './follower.js'
import { InProcessControl, type HostCalls } from './in-process.js'
import { TaskJournal } from './journal.js'
import { buildHandler } from './server.js'

export interface FaceOptions {
  /** the daemon's control socket */
  socket: string
  /** the daemon's control methods: calls answered in this process (else over the socket) */
  methods?: MethodTable
  /** HOST:PORT */
  listen: string
  cert?: string
  key?: string
  publicUrl?: string
  bodyLimit: number
  ratePerMinute: number
  log: Logger
}

export interface RunningFace {
  /** HOST:PORT actually bound */
  address: string
  baseUrl: string
  tls: boolean
  /** set when the setup is unsafe (not loopback, no TLS) */
  warning: string | undefined
  stop: () => Promise<void>
}

function splitListen (listen: string): { host: string, port: number } {
  const i = listen.lastIndexOf(':')
  return { host: listen.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(listen.slice(i + 1)) }
}

export function isLoopback (host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host)
}

function hostPort (a: AddressInfo): string {
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`
}

export async function startA2aFace (o: FaceOptions): Promise<RunningFace> {
  const socket = await ControlClient.connect(o.socket)
  const client: HostCalls = o.methods === undefined ? socket : new InProcessControl(o.methods, socket)
  const journal = new TaskJournal(client)
  const follower = new InboxFollower(async () => await ControlClient.connect(o.socket), client, journal, o.log)
  const tls = o.cert !== undefined && o.key !== undefined
  let baseUrl = ''
  const app = buildHandler({ client, journal, follow: (n) => follower.follow(n), bodyLimit: o.bodyLimit, ratePerMinute: o.ratePerMinute }, () => baseUrl)
  const server: Server = tls ? createHttps({ cert: readFileSync(o.cert as string), key: readFileSync(o.key as string) }, app) : createHttp(app)
  const { host, port } = splitListen(o.listen)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  }).catch((err: unknown) => { client.close(); throw err })
  const address = hostPort(server.address() as AddressInfo)
  baseUrl = (o.publicUrl ?? `${tls ? 'https' : 'http'}://${address}`).replace(/\/+$/, '')
  const warning = !isLoopback(host) && !tls
    ? `the A2A face listens on ${address}, not loopback, WITHOUT TLS: bearer credentials cross the network in clear; set a2a.cert and a2a.key`
    : undefined
  for (const name of (await client.call('a2a.info')).clients) follower.follow(name)
  const stop = async (): Promise<void> => {
    follower.stop()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    client.close()
  }
  return { address, baseUrl, tls, warning, stop }
}
