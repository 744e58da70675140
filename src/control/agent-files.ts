// Where a managed node's files live under a home, for the daemon (which
// writes them) and any face that reads them (`amesh agent logs`):
// `<home>/agents/<name>/output.log`, shifted to output.log.1 … .LOG_KEEP
// when it grows past its bound.
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** The current output file of a managed node. */
export const LOG_FILE = 'output.log'
/** Rotated output files kept. */
export const LOG_KEEP = 3

/** A managed node's directory under `<home>/agents`. */
export function agentDir (agentsDir: string, name: string): string {
  return join(agentsDir, name)
}

/** The log files of a node, oldest first (rotated ones, then the current one). */
export function logFiles (dir: string, keep = LOG_KEEP): string[] {
  const files: string[] = []
  for (let i = keep; i >= 1; i--) files.push(join(dir, `${LOG_FILE}.${i}`))
  files.push(join(dir, LOG_FILE))
  return files.filter((f) => existsSync(f))
}

/** An ACP node's live status, written by its bridge (src/acp), read by `agent ls`. */
export const ACP_STATUS_FILE = 'acp-status.json'
/** The env var that hands the bridge its settings (JSON), set by the daemon for `runtime: acp`. */
export const ACP_CONFIG_ENV = 'AMESH_ACP_CONFIG'
