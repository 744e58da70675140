// Helpers for the ACP bridge tests: specs with runtime acp over the echo agent fixture, inbox rows.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { jsonLines, ROOT, waitFor, type TestHost } from '../utils/hosts.js'

export const ECHO_AGENT = join(ROOT, 'dist', 'test', 'acp', 'fixtures', 'echo-agent.js')

export interface Row { seq: number, id: string, from: string, signal: string, conversation_id?: string, in_reply_to?: string, payload: { text?: string, result?: string, context?: string, options?: string[] } }
export interface AcpRow { name: string, state: string, restarts: number, pid: number | null, acp?: { agent: string | null, version: string | null, sessions: number, state: string, agent_pid: number | null } }

export function acpSpec (dir: string, name: string, cwd: string, acp: Record<string, unknown> = {}): string {
  const spec = {
    name,
    runtime: 'acp',
    command: process.execPath,
    args: [ECHO_AGENT],
    cwd,
    restart: { policy: 'on-failure', backoff: '500ms', max_restarts: 5, window: '60s' },
    stop_timeout: '3s',
    acp
  }
  const path = join(dir, `${name}.yaml`)
  writeFileSync(path, JSON.stringify(spec, null, 2) + '\n')
  return path
}

export async function rows (h: TestHost, node: string): Promise<Row[]> {
  return jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
}

/** The packets `from` sent to `node` in reply to the prompt `promptId` (the bridge sets in_reply_to), in inbox order. */
export async function repliesTo (h: TestHost, node: string, promptId: string): Promise<Row[]> {
  return (await rows(h, node)).filter((r) => r.in_reply_to === promptId || (r.signal === 'ESCALATE' && r.in_reply_to === promptId))
}

/** Wait until a reply with `signal` to `promptId` is in `node`'s inbox; returns all replies so far. */
export async function waitReply (h: TestHost, node: string, promptId: string, signal: string, timeout = 30_000): Promise<Row[]> {
  return await waitFor(async () => {
    const r = await repliesTo(h, node, promptId)
    return r.some((x) => x.signal === signal) ? r : undefined
  }, timeout, `${signal} for ${promptId} in ${node}'s inbox`)
}

export async function acpRow (h: TestHost, name: string): Promise<AcpRow | undefined> {
  return jsonLines<AcpRow>(await h.ok(['agent', 'ls', '--json'])).find((a) => a.name === name)
}

export async function waitAcp (h: TestHost, name: string, pred: (a: AcpRow) => boolean, what: string, timeout = 30_000): Promise<AcpRow> {
  return await waitFor(async () => { const a = await acpRow(h, name); return a !== undefined && pred(a) ? a : undefined }, timeout, what)
}

/** Send as `as` to `to`; returns the message id. */
export async function sendId (h: TestHost, as: string, to: string, text: string, extra: string[] = []): Promise<string> {
  return (JSON.parse(await h.ok(['send', '--as', as, to, text, '--json', ...extra])) as { id: string }).id
}

export function errorReason (r: Row): string {
  return (JSON.parse(r.payload.context ?? '{}') as { reason?: string }).reason ?? ''
}
