import type { FlagSpec, Parsed } from './args.js'

export interface Command {
  name: string
  summary: string
  usage: string
  help: string
  flags: FlagSpec
  run: (args: Parsed, home: string) => Promise<number>
}

/** Flags every command takes. */
export const COMMON_FLAGS: FlagSpec = { home: 'string', help: 'boolean', json: 'boolean' }
