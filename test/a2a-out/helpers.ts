// Helpers of the outbound A2A tests: the sender's inbox as rows, sends, waiting for answers.
import { jsonLines, waitFor, type TestHost } from '../utils/hosts.js'
import { processAlive } from '../../src/util/process-alive.js'

export interface Row { seq: number, id: string, from: string, signal: string, in_reply_to?: string, conversation_id?: string, session_id?: string, payload: { text?: string, context?: string, result?: string, options?: string[] } }

export async function inbox (h: TestHost, node: string): Promise<Row[]> {
  return jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
}

export async function send (h: TestHost, as: string, to: string, text: string, extra: string[] = []): Promise<string> {
  return (JSON.parse(await h.ok(['send', '--as', as, to, text, '--json', ...extra])) as { id: string, state: string }).id
}

/** Rows of `node`'s inbox from `from`, once the last of them satisfies `done`. */
export async function answersUntil (h: TestHost, node: string, from: string, done: (rows: Row[]) => boolean, what: string): Promise<Row[]> {
  return await waitFor(async () => {
    const rows = (await inbox(h, node)).filter((r) => r.from === from)
    return done(rows) ? rows : undefined
  }, 30_000, what)
}

/** Wait until a process no longer exists (after a kill -9). */
export async function waitGone (pid: number): Promise<void> {
  await waitFor(async () => !processAlive(pid), 20_000, `pid ${pid} to exit`)
}
