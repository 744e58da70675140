// The bridge's settings: what the daemon put in AMESH_ACP_CONFIG for a
// `runtime: acp` spec (src/agents/acp-runtime.ts), checked again here.
import { ACP_CONFIG_ENV } from '../control/agent-files.js'
import { ConfigError } from '../util/errors.js'

export interface BridgeConfig {
  /** the ACP agent's program, args and working directory */
  command: string
  args: string[]
  cwd: string
  /** the node's agent dir (status and journal files) */
  dir: string
  approver?: string
  permissionTimeoutMs: number
  checkpointMs: number
  checkpointBytes: number
  fs: 'read-write' | 'read-only' | 'none'
  retry: 'none' | 'once'
  mcp: boolean
}

function need<T> (ok: boolean, field: string, v: T): T {
  if (!ok) throw new ConfigError(`${ACP_CONFIG_ENV}: ${field} is missing or invalid`)
  return v
}

const isStr = (v: unknown): v is string => typeof v === 'string' && v !== ''
const isMs = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

/** Parse the bridge's settings from the environment. */
export function bridgeConfig (env: NodeJS.ProcessEnv = process.env): BridgeConfig {
  const text = env[ACP_CONFIG_ENV]
  if (text === undefined || text === '') throw new ConfigError(`${ACP_CONFIG_ENV} is not set: the bridge is started by amesh for a spec with runtime: acp`)
  let raw: Record<string, unknown>
  try { raw = JSON.parse(text) as Record<string, unknown> } catch { throw new ConfigError(`${ACP_CONFIG_ENV} is not JSON`) }
  const args = raw.args
  const cfg: BridgeConfig = {
    command: need(isStr(raw.command), 'command', raw.command as string),
    args: need(Array.isArray(args) && args.every((a) => typeof a === 'string'), 'args', args as string[]),
    cwd: need(isStr(raw.cwd), 'cwd', raw.cwd as string),
    dir: need(isStr(raw.dir), 'dir', raw.dir as string),
    permissionTimeoutMs: need(isMs(raw.permissionTimeoutMs), 'permissionTimeoutMs', raw.permissionTimeoutMs as number),
    checkpointMs: need(isMs(raw.checkpointMs), 'checkpointMs', raw.checkpointMs as number),
    checkpointBytes: need(isMs(raw.checkpointBytes), 'checkpointBytes', raw.checkpointBytes as number),
    fs: need(['read-write', 'read-only', 'none'].includes(String(raw.fs)), 'fs', raw.fs as BridgeConfig['fs']),
    retry: need(['none', 'once'].includes(String(raw.retry)), 'retry', raw.retry as BridgeConfig['retry']),
    mcp: raw.mcp !== false
  }
  if (isStr(raw.approver)) cfg.approver = raw.approver
  return cfg
}
