// Driving the real bin/amesh inside namespace LAN hosts.
import { fileURLToPath } from 'node:url'
import type { Lan, RunResult } from '../utils/netns.js'

export const BIN = fileURLToPath(new URL('../../../bin/amesh', import.meta.url))

/** Run `amesh ARGS --home HOME` inside LAN host i; rejects on a non-zero exit unless `allowFail`. */
export async function amesh (lan: Lan, i: number, home: string, args: string[], allowFail = false, timeoutMs = 30_000): Promise<RunResult> {
  const r = await lan.run(i, process.execPath, [BIN, ...args, '--home', home], { timeoutMs })
  if (!allowFail && r.code !== 0) throw new Error(`amesh ${args.join(' ')} on host ${i} exited ${String(r.code)}: ${r.stderr.trim()}`)
  return r
}

export function jsonLines<T> (stdout: string): T[] {
  return stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T)
}
