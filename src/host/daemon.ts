import { ControlServer, type MethodTable } from '../control/server.js'
import { controlMethods } from './api.js'
import { startHost, type RunningHost } from './components.js'
import type { HostConfig } from './config.js'
import { a2aOff, type A2aFaceState } from './api-a2a.js'

export interface DaemonOptions {
  home: string
  config: HostConfig
  logFile?: string
}

export interface Daemon {
  host: RunningHost
  stop: () => Promise<void>
  stopped: Promise<void>
}

/**
 * The A2A face, when configured: in this process, as a client of the control
 * contract (docs/A2A.md says why not a child process): its calls answered by
 * the socket's own method table in this process, its streams over the socket
 * that just started; cards then carry its interfaces. Stopped before the socket.
 */
async function startFace (host: RunningHost, state: A2aFaceState, methods: MethodTable): Promise<void> {
  const cfg = host.config.a2a
  if (cfg === undefined) return
  const { startA2aFace } = await import('../a2a/face.js')
  const face = await startA2aFace({ socket: host.paths.socket, methods, ...cfg, log: host.log })
  host.lifecycle.add('a2a face', { stop: face.stop })
  await host.lifecycle.start()
  state.info = {
    listen: face.address, base_url: face.baseUrl, tls: face.tls, clients: [], warning: face.warning ?? null,
    body_limit: cfg.bodyLimit, rate_per_minute: cfg.ratePerMinute
  }
  host.cards.setA2aBaseUrl(face.baseUrl)
  host.announce()
  host.log(`a2a face on ${face.baseUrl}/nodes/NAME/`)
  if (face.warning !== undefined) host.log(`WARNING: ${face.warning}`)
}

/**
 * Start a host (every service, managed nodes included) and its control
 * socket, the last service to start and the first to stop; then bring back
 * the managed nodes (they reach the socket). SIGINT/SIGTERM stop it
 * gracefully, a second signal forces exit.
 */
export async function runDaemon (opts: DaemonOptions): Promise<Daemon> {
  const host = await startHost({ home: opts.home, config: opts.config, logFile: opts.logFile, agents: true })
  let resolveStopped!: () => void
  const stopped = new Promise<void>((resolve) => { resolveStopped = resolve })
  let stopping: Promise<void> | undefined
  const stop = async (): Promise<void> => {
    stopping ??= (async () => {
      host.log('stopping')
      await host.stop()
      host.log('stopped')
      resolveStopped()
    })()
    await stopping
  }
  try {
    const a2a = a2aOff()
    const methods = controlMethods(host, () => { void stop() }, a2a)
    const control = new ControlServer(host.paths.socket, methods, host.log)
    host.lifecycle.add('control socket', control)
    await host.lifecycle.start()
    await startFace(host, a2a, methods)
    await host.agents?.restore()
  } catch (err) {
    await host.stop().catch(() => {})
    throw err
  }
  let signals = 0
  const onSignal = (sig: string): void => {
    if (++signals > 1) { host.log(`${sig} again: forcing exit`); process.exit(130) }
    host.log(`${sig}: shutting down`)
    void stop()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  void stopped.then(() => { process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal) })
  host.log(`control socket ${host.paths.socket}; pid ${process.pid}; ready`)
  return { host, stop, stopped }
}
