import { ControlServer } from '../control/server.js'
import { controlMethods } from './api.js'
import type { HostConfig } from './config.js'
import { Host } from './host.js'
import { startAgents, startDiscovery, type HostServices } from './services.js'

export interface DaemonOptions {
  home: string
  config: HostConfig
  logFile?: string
}

export interface Daemon {
  host: Host
  stop: () => Promise<void>
  stopped: Promise<void>
}

/** Start a host and its control socket; SIGINT/SIGTERM stop it gracefully, a second signal forces exit. */
export async function runDaemon (opts: DaemonOptions): Promise<Daemon> {
  const host = new Host({ home: opts.home, config: opts.config, logFile: opts.logFile })
  let resolveStopped!: () => void
  const stopped = new Promise<void>((resolve) => { resolveStopped = resolve })
  let control: ControlServer | undefined
  const services: HostServices = {}
  let stopping: Promise<void> | undefined
  const stop = async (): Promise<void> => {
    stopping ??= (async () => {
      host.log('stopping')
      await control?.stop().catch(() => {})
      await services.agents?.stop().catch(() => {})
      await services.discovery?.stop().catch(() => {})
      await host.stop()
      resolveStopped()
    })()
    await stopping
  }
  try {
    await host.start()
    services.discovery = await startDiscovery(host)
    const agents = services.agents = await startAgents(host)
    control = new ControlServer(host.paths.socket, controlMethods(host, () => { void stop() }, services), host.log)
    await control.start()
    await agents.restore()
  } catch (err) {
    await services.agents?.stop().catch(() => {})
    await services.discovery?.stop().catch(() => {})
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
