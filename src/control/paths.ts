import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

/** Every path under a home directory, computed in one place. */
export interface HomePaths {
  home: string
  config: string
  hostKey: string
  store: string
  socket: string
  pidFile: string
  log: string
  agents: string
}

export function resolveHome (flag?: string): string {
  const dir = flag ?? process.env.AMESH_HOME ?? join(homedir(), '.amesh')
  return resolve(dir)
}

export function homePaths (home: string): HomePaths {
  return {
    home,
    config: join(home, 'config.yaml'),
    hostKey: join(home, 'host.key'),
    store: join(home, 'store'),
    socket: join(home, 'amesh.sock'),
    pidFile: join(home, 'amesh.pid'),
    log: join(home, 'amesh.log'),
    agents: join(home, 'agents')
  }
}
