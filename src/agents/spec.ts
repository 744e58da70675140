// Spec files of managed nodes (YAML): parsed, validated with errors that name
// the field, normalised. Pure apart from reading the file. See docs/AGENTS.md.
import { readFileSync, statSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { parse } from 'yaml'
import { validateProfile } from '../acl/index.js'
import { SIGNALS, ZONES, type Signal, type Zone } from '../packet/types.js'
import { checkNodeName } from '../store/nodes.js'
import { errorMessage } from '../util/errors.js'
import { DEFAULT_BACKOFF, DEFAULT_BACKOFF_MAX, DEFAULT_MAX_RESTARTS, DEFAULT_RESTART_WINDOW, DEFAULT_STOP_TIMEOUT, MAX_SPEC_BYTES } from './constants.js'
import { SpecError } from './errors.js'
import { acpSettings, runtimeOf, type AcpSpec, type Runtime } from './acp-spec.js'

export const RESTART_POLICIES = ['never', 'on-failure', 'always'] as const
export type RestartPolicy = typeof RESTART_POLICIES[number]

export interface SkillSpec { id: string, name: string, description: string, tags: string[] }
export interface AllowEntry { node: string, signals?: Signal[], zones?: Zone[] }

export interface RestartSpec { policy: RestartPolicy, backoffMs: number, backoffMaxMs: number, maxRestarts: number, windowMs: number }

/** A validated, normalised spec. */
export interface AgentSpec {
  name: string
  description?: string
  skills?: SkillSpec[]
  command: string
  args: string[]
  /** absolute; default: the spec file's directory (remote: the node's directory on that host) */
  cwd?: string
  env: Record<string, string>
  restart: RestartSpec
  /** the process must call `amesh agent heartbeat` at least this often (ms); absent: process alive is enough */
  heartbeatMs?: number
  stopTimeoutMs: number
  allow: AllowEntry[]
  profile?: Record<string, unknown>
  /** run on another host: a peer id, or a node name/id whose host is meant */
  host?: string
  /** process (default): command is the node; acp: command is an ACP agent that amesh's bridge drives */
  runtime: Runtime
  /** runtime acp only: the bridge's settings */
  acp?: AcpSpec
}

type Raw = Record<string, unknown>

const TOP_FIELDS = ['name', 'description', 'skills', 'command', 'args', 'cwd', 'env', 'restart', 'health', 'stop_timeout', 'comms', 'host', 'runtime', 'acp']
const RESTART_FIELDS = ['policy', 'backoff', 'backoff_max', 'max_restarts', 'window']
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

function fail (field: string, message: string): never {
  throw new SpecError(`invalid spec: ${field}: ${message}`)
}

function isMap (v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function checkFields (raw: Raw, known: string[], prefix: string): void {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) fail(prefix + key, `unknown field (known: ${known.join(', ')})`)
  }
}

function str (raw: Raw, key: string, prefix = ''): string | undefined {
  const v = raw[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string' || v === '') fail(prefix + key, 'must be a non-empty string')
  return v
}

function strings (v: unknown, field: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' || typeof x === 'number')) fail(field, 'must be a list of strings')
  return (v as Array<string | number>).map(String)
}

/** A duration: a number of ms, or "500ms", "30s", "5m", "1h". */
export function duration (v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v
  const m = typeof v === 'string' ? /^(\d+)(ms|s|m|h)?$/.exec(v.trim()) : null
  if (m === null) fail(field, `must be a duration such as 500ms, 30s, 5m (got ${JSON.stringify(v)})`)
  return Number(m[1]) * UNITS[m[2] ?? 'ms']
}

function count (v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(field, `must be a non-negative integer (got ${JSON.stringify(v)})`)
  return v
}

function skills (v: unknown): SkillSpec[] {
  if (!Array.isArray(v)) fail('skills', 'must be a list')
  return v.map((s, i) => {
    const field = `skills[${i}]`
    if (typeof s === 'string' && s !== '') return { id: s, name: s, description: s, tags: [] }
    if (!isMap(s)) fail(field, 'must be a string or {id, name, description, tags}')
    checkFields(s, ['id', 'name', 'description', 'tags'], field + '.')
    const id = str(s, 'id', field + '.') ?? fail(field + '.id', 'is required')
    const tags = s.tags === undefined ? [] : strings(s.tags, field + '.tags')
    return { id, name: str(s, 'name', field + '.') ?? id, description: str(s, 'description', field + '.') ?? id, tags }
  })
}

function env (v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {}
  if (!isMap(v)) fail('env', 'must be a map of NAME: value')
  const out: Record<string, string> = {}
  for (const [k, x] of Object.entries(v)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) fail(`env.${k}`, 'is not a valid variable name')
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') fail(`env.${k}`, 'must be a string')
    out[k] = String(x)
  }
  return out
}

function restart (v: unknown): RestartSpec {
  const r: Raw = v === undefined || v === null ? {} : isMap(v) ? v : fail('restart', 'must be a map {policy, backoff, backoff_max, max_restarts, window}')
  checkFields(r, RESTART_FIELDS, 'restart.')
  const policy = r.policy ?? 'on-failure'
  if (typeof policy !== 'string' || !(RESTART_POLICIES as readonly string[]).includes(policy)) {
    fail('restart.policy', `must be one of ${RESTART_POLICIES.join(', ')} (got ${JSON.stringify(policy)})`)
  }
  return {
    policy: policy as RestartPolicy,
    backoffMs: r.backoff === undefined ? DEFAULT_BACKOFF : duration(r.backoff, 'restart.backoff'),
    backoffMaxMs: r.backoff_max === undefined ? DEFAULT_BACKOFF_MAX : duration(r.backoff_max, 'restart.backoff_max'),
    maxRestarts: r.max_restarts === undefined ? DEFAULT_MAX_RESTARTS : count(r.max_restarts, 'restart.max_restarts'),
    windowMs: r.window === undefined ? DEFAULT_RESTART_WINDOW : duration(r.window, 'restart.window')
  }
}

function heartbeat (v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined
  if (!isMap(v)) fail('health', 'must be a map {heartbeat}')
  checkFields(v, ['heartbeat'], 'health.')
  return v.heartbeat === undefined ? undefined : duration(v.heartbeat, 'health.heartbeat')
}

function enumList<T extends string> (list: string[], allowed: readonly T[], field: string): T[] {
  for (const s of list) if (!(allowed as readonly string[]).includes(s)) fail(field, `unknown value ${s} (known: ${allowed.join(', ')})`)
  return list as T[]
}

function allowEntry (e: unknown, i: number): AllowEntry {
  const field = `comms.allow[${i}]`
  if (typeof e === 'string' && e !== '') return { node: e }
  if (!isMap(e)) fail(field, 'must be a node name/id or {node, signals, zones}')
  checkFields(e, ['node', 'signals', 'zones'], field + '.')
  const out: AllowEntry = { node: str(e, 'node', field + '.') ?? fail(field + '.node', 'is required') }
  if (e.signals !== undefined) out.signals = enumList(strings(e.signals, field + '.signals').map((s) => s.toUpperCase()), SIGNALS, field + '.signals')
  if (e.zones !== undefined) out.zones = enumList(strings(e.zones, field + '.zones').map((s) => s.toLowerCase()), ZONES, field + '.zones')
  return out
}

function comms (v: unknown): Pick<AgentSpec, 'allow' | 'profile'> {
  if (v === undefined || v === null) return { allow: [] }
  if (!isMap(v)) fail('comms', 'must be a map {allow, profile}')
  checkFields(v, ['allow', 'profile'], 'comms.')
  if (v.allow !== undefined && !Array.isArray(v.allow)) fail('comms.allow', 'must be a list of node names/ids')
  const allow = ((v.allow as unknown[] | undefined) ?? []).map(allowEntry)
  if (v.profile === undefined || v.profile === null) return { allow }
  try {
    return { allow, profile: validateProfile(v.profile) as Record<string, unknown> }
  } catch (err) {
    return fail('comms.profile', errorMessage(err))
  }
}

function nodeName (raw: Raw, override?: string): string {
  const name = override ?? str(raw, 'name') ?? fail('name', 'is required (or give --name)')
  try { checkNodeName(name) } catch (err) { fail('name', errorMessage(err)) }
  return name
}

/**
 * Validate a parsed spec object. `base` resolves a relative `cwd` and is the
 * default working directory. Unknown fields are refused, naming the field.
 */
export function parseSpecObject (value: unknown, base: string, nameOverride?: string): AgentSpec {
  if (!isMap(value)) fail('(spec)', 'the file must hold a map')
  checkFields(value, TOP_FIELDS, '')
  const command = str(value, 'command') ?? fail('command', 'is required: the program to run')
  const cwd = str(value, 'cwd')
  const spec: AgentSpec = {
    name: nodeName(value, nameOverride),
    command,
    args: value.args === undefined || value.args === null ? [] : strings(value.args, 'args'),
    cwd: cwd === undefined ? base : isAbsolute(cwd) ? cwd : resolve(base, cwd),
    env: env(value.env),
    restart: restart(value.restart),
    stopTimeoutMs: value.stop_timeout === undefined ? DEFAULT_STOP_TIMEOUT : duration(value.stop_timeout, 'stop_timeout'),
    ...comms(value.comms),
    runtime: runtimeOf(value.runtime)
  }
  if (spec.runtime === 'acp') spec.acp = acpSettings(value.acp, duration)
  else if (value.acp !== undefined) fail('acp', 'is only for runtime: acp')
  const description = str(value, 'description')
  if (description !== undefined) spec.description = description
  if (value.skills !== undefined && value.skills !== null) spec.skills = skills(value.skills)
  const hb = heartbeat(value.health)
  if (hb !== undefined) spec.heartbeatMs = hb
  const host = str(value, 'host')
  if (host !== undefined) spec.host = host
  return spec
}

/** Parse YAML text; syntax errors name the line. */
export function parseSpecText (text: string, base: string, nameOverride?: string): { raw: Raw, spec: AgentSpec } {
  let value: unknown
  try {
    value = parse(text)
  } catch (err) {
    throw new SpecError(`invalid spec: not valid YAML: ${errorMessage(err)}`)
  }
  const spec = parseSpecObject(value, base, nameOverride)
  return { raw: value as Raw, spec }
}

/** Read and validate a spec file. */
export function loadSpecFile (path: string, nameOverride?: string): { raw: Raw, spec: AgentSpec, base: string } {
  const abs = resolve(path)
  let text: string
  try {
    if (statSync(abs).size > MAX_SPEC_BYTES) throw new SpecError(`spec ${abs} is larger than ${MAX_SPEC_BYTES} bytes`)
    text = readFileSync(abs, 'utf8')
  } catch (err) {
    if (err instanceof SpecError) throw err
    throw new SpecError(`cannot read spec ${abs}: ${errorMessage(err)}`)
  }
  const base = dirname(abs)
  return { ...parseSpecText(text, base, nameOverride), base }
}
