import { InvalidArgumentError } from '../util/errors.js'

export type FlagKind = 'string' | 'boolean' | 'list'
export type FlagSpec = Record<string, FlagKind>

export interface Parsed {
  positionals: string[]
  flags: Map<string, string | boolean | string[]>
}

/** A small strict parser: `--name value`, `--name=value`, `--bool`, repeated `--list`; unknown flags are errors. */
export function parseArgs (argv: string[], spec: FlagSpec): Parsed {
  const positionals: string[] = []
  const flags = new Map<string, string | boolean | string[]>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') { positionals.push(...argv.slice(i + 1)); break }
    if (!arg.startsWith('--') || arg === '-') { positionals.push(arg); continue }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq >= 0 ? eq : undefined)
    const kind = spec[name]
    if (kind === undefined) throw new InvalidArgumentError(`unknown option --${name} (see --help)`)
    if (kind === 'boolean') { flags.set(name, true); continue }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined) throw new InvalidArgumentError(`option --${name} needs a value`)
    if (kind === 'list') flags.set(name, [...(flags.get(name) as string[] | undefined ?? []), value])
    else flags.set(name, value)
  }
  return { positionals, flags }
}

export function str (p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name)
  return typeof v === 'string' ? v : undefined
}

export function bool (p: Parsed, name: string): boolean {
  return p.flags.get(name) === true
}

export function list (p: Parsed, name: string): string[] {
  const v = p.flags.get(name)
  return Array.isArray(v) ? v : []
}

export function int (p: Parsed, name: string): number | undefined {
  const v = str(p, name)
  if (v === undefined) return undefined
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`--${name} must be a non-negative integer`)
  return Number(v)
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** "500ms", "30s", "5m", "2h", "7d" → milliseconds. */
export function parseDuration (v: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(v.trim())
  if (m === null) throw new InvalidArgumentError(`invalid duration "${v}": use a number with ms, s, m, h or d`)
  return Number(m[1]) * UNITS[m[2] ?? 'ms']
}

export function needPositionals (p: Parsed, n: number, usage: string): void {
  if (p.positionals.length < n) throw new InvalidArgumentError(`missing arguments; usage: ${usage}`)
  if (p.positionals.length > n) throw new InvalidArgumentError(`unexpected argument "${p.positionals[n]}"; usage: ${usage}`)
}
