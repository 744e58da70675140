// `runtime: acp`: the supervised process is amesh's ACP bridge
// (`amesh acp-bridge`, src/acp), which starts the spec's command as an ACP
// agent over stdio and drives it. Restart policy, logs and stop apply to the
// bridge, and so to the agent it started.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ACP_CONFIG_ENV, ACP_STATUS_FILE } from '../control/agent-files.js'
import type { AgentSpec } from './spec.js'

/** The spec the supervisor runs for an ACP node: the bridge, handed the agent's command and settings. */
export function bridgeSpec (spec: AgentSpec, bin: string, dir: string): AgentSpec {
  if (spec.runtime !== 'acp' || spec.acp === undefined) return spec
  const config = { command: spec.command, args: spec.args, cwd: spec.cwd, dir, ...spec.acp }
  return {
    ...spec,
    command: process.execPath,
    args: [bin, 'acp-bridge', '--name', spec.name],
    env: { ...spec.env, [ACP_CONFIG_ENV]: JSON.stringify(config) }
  }
}

/** What `agent ls` shows of an ACP node: the bridge's status file, when there is one. */
export function acpStatus (dir: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(readFileSync(join(dir, ACP_STATUS_FILE), 'utf8'))
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
