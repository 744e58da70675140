// Helpers for managed-node tests: spec files, `agent ls`, inbox reads, polls.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { amesh, jsonLines, ROOT, waitFor, type RunResult, type TestHost } from '../utils/hosts.js'
import { processAlive } from '../../src/util/process-alive.js'

export const ECHO_WORKER = join(ROOT, 'config', 'examples', 'echo-worker.mjs')

export interface AgentRow { name: string, id: string, kind: string, parent: string | null, parent_id: string | null, state: string, pid: number | null, restarts: number, uptime_ms: number, host: string }
export interface Row { seq: number, id: string, from: string, from_id: string, signal: string, payload: { text?: string, result?: string, context?: string } }

export function specDir (): string {
  return mkdtempSync(join(tmpdir(), 'am-spec-'))
}

/** An echo-worker spec (JSON is YAML) with overrides; returns its path. */
export function writeSpec (dir: string, file: string, fields: Record<string, unknown> = {}): string {
  const spec = { name: 'worker', command: process.execPath, args: [ECHO_WORKER], restart: { policy: 'on-failure', backoff: '1500ms', max_restarts: 5, window: '60s' }, stop_timeout: '3s', ...fields }
  const path = join(dir, file)
  writeFileSync(path, JSON.stringify(spec, null, 2) + '\n')
  return path
}

export async function agents (h: TestHost): Promise<AgentRow[]> {
  return jsonLines<AgentRow>(await h.ok(['agent', 'ls', '--json']))
}

export async function agentRow (h: TestHost, name: string): Promise<AgentRow | undefined> {
  return (await agents(h)).find((a) => a.name === name)
}

export async function waitAgent (h: TestHost, name: string, pred: (a: AgentRow) => boolean, what: string, timeout = 20_000): Promise<AgentRow> {
  return await waitFor(async () => { const a = await agentRow(h, name); return a !== undefined && pred(a) ? a : undefined }, timeout, what)
}

export async function inbox (h: TestHost, node: string): Promise<Row[]> {
  return jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
}

/** RETURN results in a node's inbox from one sender. */
export async function returns (h: TestHost, node: string, from: string): Promise<string[]> {
  return (await inbox(h, node)).filter((r) => r.signal === 'RETURN' && r.from === from).map((r) => r.payload.result ?? '')
}

export async function waitReturns (h: TestHost, node: string, from: string, n: number, timeout = 20_000): Promise<string[]> {
  return await waitFor(async () => { const r = await returns(h, node, from); return r.length >= n ? r : undefined }, timeout, `${n} RETURN(s) from ${from} in ${node}'s inbox`)
}

export async function logsOf (h: TestHost, name: string): Promise<string> {
  return await h.ok(['agent', 'logs', name])
}

export async function waitLog (h: TestHost, name: string, text: string, timeout = 20_000): Promise<string> {
  return await waitFor(async () => { const l = await logsOf(h, name); return l.includes(text) ? l : undefined }, timeout, `"${text}" in ${name}'s log`)
}

/** Exited counts as gone even before the process is reaped (a detached daemon's adopter may reap late). */
export { processAlive as alive }

export async function nodeId (h: TestHost, name: string, parent?: string): Promise<string> {
  const out = await h.ok(['node', 'add', name, '--json', ...(parent !== undefined ? ['--parent', parent] : [])])
  return (JSON.parse(out) as { id: string }).id
}

/** Run amesh for a host as if from inside node `node` (AMESH_NODE set). */
export async function runAs (h: TestHost, node: string, args: string[]): Promise<RunResult> {
  return await amesh([...args, '--home', h.home], { env: { ...process.env, AMESH_NODE: node } })
}
