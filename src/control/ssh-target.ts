// What the CLI and the daemon's ssh joins share about an ssh target: its
// syntax, and the exit status `amesh join --info` uses for "not running".
import { InvalidArgumentError } from '../util/errors.js'

import { EXIT_NOT_RUNNING } from '../util/exit-codes.js'

/** `amesh join --info` (and every read-only command) exits with this when no daemon runs. */
export const INFO_NOT_RUNNING_EXIT = EXIT_NOT_RUNNING

/** `[USER@]HOST[:PORT]` (IPv6 in brackets); nothing may start with "-" (ssh would read an option). */
export function parseSshTarget (text: string): { destination: string, port?: number } {
  const m = /^((?:[^@\s/-][^@\s/]*@)?)(\[[0-9A-Fa-f:.]+\]|[^:@\s/[\]-][^:@\s/[\]]*)(?::(\d{1,5}))?$/.exec(text)
  if (m === null) throw new InvalidArgumentError(`not an ssh target: ${JSON.stringify(text)} (use [USER@]HOST[:PORT])`)
  const host = m[2].startsWith('[') ? m[2].slice(1, -1) : m[2]
  const port = m[3] === undefined ? undefined : Number(m[3])
  if (port !== undefined && (port < 1 || port > 65535)) throw new InvalidArgumentError(`ssh port out of range: ${port}`)
  return { destination: m[1] + host, port }
}
