import { ControlServer } from '../control/server.js'
import { controlMethods } from './api.js'
import { startHost, type RunningHost } from './components.js'
import type { HostConfig } from './config.js'

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
      resolveStopped()
    })()
    await stopping
  }
  try {
    const control = new ControlServer(host.paths.socket, controlMethods(host, () => { void stop() }), host.log)
    host.lifecycle.add('control socket', control)
    await host.lifecycle.start()
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
