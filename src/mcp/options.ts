import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { ConfigError } from '../util/errors.js'
import { LOOP_LIMIT, LOOP_WINDOW, REPUSH_LIMIT } from './constants.js'

/** Settings of one `amesh mcp` session. */
export interface McpOptions {
  home: string
  /** the external node this session is */
  name: string
  /** its parent, for lineage when the node is created */
  parent?: string
  /** relay Claude Code permission prompts to the approver (default false) */
  permissionRelay: boolean
  /** the approver node (default: the parent) */
  approver?: string
  /** consecutive automatic replies per peer/conversation within the window (default LOOP_LIMIT) */
  loopLimit: number
  /** the loop guard's window, ms (default LOOP_WINDOW) */
  loopWindow: number
  /** unread backlog messages pushed again to each new attachment (default REPUSH_LIMIT) */
  repushLimit: number
  /** log file (default: stderr) */
  logFile?: string
  /** tools only: no channel events, the inbox is left to another consumer (the ACP bridge) */
  toolsOnly?: boolean
}

/** What `<home>/mcp.yaml` may hold: defaults, then per-node settings. */
interface FileSettings {
  permissionRelay?: boolean
  approver?: string
  loopLimit?: number
  loopWindow?: number
  repushLimit?: number
}

type Raw = Record<string, unknown>

const KEYS: Record<string, keyof FileSettings> = {
  permission_relay: 'permissionRelay',
  approver: 'approver',
  loop_limit: 'loopLimit',
  loop_window_ms: 'loopWindow',
  repush_limit: 'repushLimit'
}

function settingsOf (raw: Raw, where: string): FileSettings {
  const out: FileSettings = {}
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'nodes' && where === 'mcp.yaml') continue
    const field = KEYS[key]
    if (field === undefined) throw new ConfigError(`${where}: unknown key "${key}"`)
    if (field === 'permissionRelay') {
      if (typeof value !== 'boolean') throw new ConfigError(`${where}: ${key} must be true or false`)
      out.permissionRelay = value
    } else if (field === 'approver') {
      if (typeof value !== 'string' || value === '') throw new ConfigError(`${where}: ${key} must be a node name`)
      out.approver = value
    } else {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new ConfigError(`${where}: ${key} must be a positive integer`)
      out[field] = value
    }
  }
  return out
}

function isMap (v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Read `<home>/mcp.yaml` for one node: top-level keys are defaults for every
 * session, `nodes.<name>` overrides them. A missing file means no settings.
 */
export function loadFileSettings (home: string, node: string): FileSettings {
  const path = join(home, 'mcp.yaml')
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`)
  }
  const raw: unknown = text.trim() === '' ? {} : parse(text)
  if (!isMap(raw)) throw new ConfigError(`${path}: the file must hold a map`)
  const nodes = raw.nodes ?? {}
  if (!isMap(nodes)) throw new ConfigError(`${path}: nodes must be a map of node name to settings`)
  const own = nodes[node] ?? {}
  if (!isMap(own)) throw new ConfigError(`${path}: nodes.${node} must be a map`)
  return { ...settingsOf(raw, 'mcp.yaml'), ...settingsOf(own, `mcp.yaml nodes.${node}`) }
}

/** Flags over the file over the defaults. */
export function resolveOptions (flags: Partial<McpOptions> & { home: string, name: string }): McpOptions {
  const file = loadFileSettings(flags.home, flags.name)
  const opts: McpOptions = {
    home: flags.home,
    name: flags.name,
    parent: flags.parent,
    permissionRelay: flags.permissionRelay === true || (file.permissionRelay ?? false),
    approver: flags.approver ?? file.approver,
    loopLimit: flags.loopLimit ?? file.loopLimit ?? LOOP_LIMIT,
    loopWindow: flags.loopWindow ?? file.loopWindow ?? LOOP_WINDOW,
    repushLimit: flags.repushLimit ?? file.repushLimit ?? REPUSH_LIMIT,
    logFile: flags.logFile,
    toolsOnly: flags.toolsOnly === true
  }
  if (opts.loopLimit < 1) throw new ConfigError('the loop limit must be at least 1')
  return opts
}
