// Desired state of managed nodes, one file per node under <home>/agents/<name>/,
// so a daemon restart brings back what should be running.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { agentDir } from '../control/agent-files.js'
import { STATE_FILE } from './constants.js'

export { agentDir }

export interface AgentRecord {
  name: string
  nodeId: string
  /** running: start it whenever the daemon starts; stopped: leave it */
  desired: 'running' | 'stopped'
  /** the spec as written (re-validated when loaded) */
  raw: Record<string, unknown>
  /** the directory a relative cwd is resolved against */
  base: string
  /** the last process id (to clear a leftover after a daemon crash) */
  pid?: number
  /** placed on another host: this host only remembers where */
  remote?: { host: string }
  /** the parent node id (kept here for a node placed on another host) */
  parent?: string
}

export function saveRecord (agentsDir: string, rec: AgentRecord): void {
  const dir = agentDir(agentsDir, rec.name)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = join(dir, STATE_FILE)
  writeFileSync(file + '.tmp', JSON.stringify(rec, null, 2) + '\n', { mode: 0o600 })
  renameSync(file + '.tmp', file)
}

/** Every record that parses; a damaged one is reported, not fatal. */
export function loadRecords (agentsDir: string, onError: (name: string, err: unknown) => void): AgentRecord[] {
  if (!existsSync(agentsDir)) return []
  const out: AgentRecord[] = []
  for (const name of readdirSync(agentsDir)) {
    const file = join(agentsDir, name, STATE_FILE)
    if (name.startsWith('.') || !existsSync(file)) continue
    try {
      out.push(JSON.parse(readFileSync(file, 'utf8')) as AgentRecord)
    } catch (err) {
      onError(name, err)
    }
  }
  return out
}
