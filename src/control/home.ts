// Which homes a command may use: a home is initialised once `amesh up`,
// `amesh init` or `amesh mcp install` wrote its config.yaml. Auto-start is
// allowed only there, so a typo'd --home never creates a home or puts a
// daemon on the network.
import { existsSync, mkdirSync, chmodSync, writeFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { defineError } from '../util/errors.js'
import { homePaths } from './paths.js'

export const HomeNotFoundError = defineError('HomeNotFoundError', 'NO_HOME')
export const HomeNotInitialisedError = defineError('HomeNotInitialisedError', 'HOME_NOT_INITIALISED')

/** The settings an initialised home records (the ones `amesh up` would use by default). */
export interface HomeSettings {
  listen: readonly string[]
  mdns: boolean
  peers?: readonly string[]
}

/** the port and listen address a home gets unless told otherwise (every interface: zero-config LAN) */
export const DEFAULT_PORT = 4747
export const DEFAULT_LISTEN: readonly string[] = [`/ip4/0.0.0.0/tcp/${DEFAULT_PORT}`]

export function isInitialised (home: string): boolean {
  return existsSync(homePaths(home).config)
}

/** Throws a named error when the home does not exist or was never set up. */
export function assertInitialised (home: string): void {
  if (!existsSync(home)) {
    throw new HomeNotFoundError(`no amesh home at ${home}: set one up with \`amesh init --home ${home}\` (or \`amesh up --home ${home}\`)`)
  }
  if (!statSync(home).isDirectory()) throw new HomeNotFoundError(`${home} is not a directory, so not an amesh home`)
  if (!isInitialised(home)) {
    throw new HomeNotInitialisedError(`${home} is not an initialised amesh home (no config.yaml): run \`amesh init --home ${home}\` or \`amesh up --home ${home}\` first`)
  }
}

/**
 * Create the home (mode 0700) and write its config.yaml with these settings
 * when it has none. Returns true when it wrote one; an existing config is
 * never touched.
 */
export function initHome (home: string, settings: HomeSettings): boolean {
  mkdirSync(home, { recursive: true, mode: 0o700 })
  chmodSync(home, 0o700)
  const path = homePaths(home).config
  if (existsSync(path)) return false
  const doc: Record<string, unknown> = { listen: settings.listen, mdns: settings.mdns }
  if (settings.peers !== undefined && settings.peers.length > 0) doc.peers = settings.peers
  // yaml loads here, not at import: every CLI command imports this module (connect.ts), few write a config
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof import('yaml')
  writeFileSync(path, '# written by amesh init / amesh up: the settings a daemon started for this home uses\n' + stringify(doc), { mode: 0o600, flag: 'wx' })
  return true
}
