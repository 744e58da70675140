import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../util/errors.js'
import { SERVER_NAME } from './constants.js'

export interface McpServerEntry {
  command: string
  args: string[]
  env?: Record<string, string>
}

function isMap (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Merge the amesh entry into a parsed .mcp.json, leaving every other key and server as it was. */
export function mergeMcpJson (existing: unknown, entry: McpServerEntry, serverName = SERVER_NAME): Record<string, unknown> {
  const base = existing === undefined ? {} : existing
  if (!isMap(base)) throw new ConfigError('.mcp.json must hold a JSON object')
  const servers = base.mcpServers ?? {}
  if (!isMap(servers)) throw new ConfigError('.mcp.json: mcpServers must be an object')
  return { ...base, mcpServers: { ...servers, [serverName]: entry } }
}

/** Add or update the amesh server in `<dir>/.mcp.json`; returns the file's path. */
export function installMcpJson (dir: string, entry: McpServerEntry, serverName = SERVER_NAME): string {
  const path = join(dir, '.mcp.json')
  let existing: unknown
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8')
    try {
      existing = text.trim() === '' ? undefined : JSON.parse(text)
    } catch (err) {
      throw new ConfigError(`${path} is not valid JSON (${(err as Error).message}); fix or remove it first`)
    }
  }
  const merged = mergeMcpJson(existing, entry, serverName)
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(merged, null, 2) + '\n')
  renameSync(tmp, path)
  return path
}

/** The command line that starts Claude Code with the amesh channel enabled. */
export function claudeCommand (serverName = SERVER_NAME): string {
  return `claude --dangerously-load-development-channels server:${serverName}`
}
