// The `acp:` block of a managed-node spec with `runtime: acp`: how the ACP
// bridge drives the agent (see docs/ACP.md). Validated here, handed to the
// bridge as JSON (AMESH_ACP_CONFIG).
import { SECOND, MINUTE } from '../util/time.js'
import { SpecError } from './errors.js'

export const RUNTIMES = ['process', 'acp'] as const
export type Runtime = typeof RUNTIMES[number]
export const FS_MODES = ['read-write', 'read-only', 'none'] as const
export const RETRY_MODES = ['none', 'once'] as const

/** Defaults of the ACP runtime. */
export const ACP_PERMISSION_TIMEOUT = 5 * MINUTE
export const ACP_CHECKPOINT_INTERVAL = 2 * SECOND
export const ACP_CHECKPOINT_BYTES = 4 * 1024

export interface AcpSpec {
  /** the node that answers permission requests; default: the prompt's requester */
  approver?: string
  permissionTimeoutMs: number
  /** at most one CHECKPOINT per this many ms per prompt */
  checkpointMs: number
  /** a CHECKPOINT carries at most this many bytes of progress */
  checkpointBytes: number
  /** what the agent's fs/* requests may do, inside cwd only */
  fs: typeof FS_MODES[number]
  /** a prompt interrupted by a crash: reported (none) or run once more (once) */
  retry: typeof RETRY_MODES[number]
  /** list amesh's own MCP server (tools only) in session/new */
  mcp: boolean
}

type Raw = Record<string, unknown>
const FIELDS = ['approver', 'permission_timeout', 'checkpoint_interval', 'checkpoint_bytes', 'fs', 'retry', 'mcp']

function fail (field: string, message: string): never {
  throw new SpecError(`invalid spec: ${field}: ${message}`)
}

function oneOf<T extends string> (v: unknown, allowed: readonly T[], field: string, dflt: T): T {
  if (v === undefined || v === null) return dflt
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) fail(field, `must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`)
  return v as T
}

/** `runtime:` (default process). */
export function runtimeOf (v: unknown): Runtime {
  return oneOf(v, RUNTIMES, 'runtime', 'process')
}

/** The `acp:` block, with defaults; `duration` parses "2s"-style values. */
export function acpSettings (v: unknown, duration: (v: unknown, field: string) => number): AcpSpec {
  const raw: Raw = v === undefined || v === null ? {} : typeof v === 'object' && !Array.isArray(v) ? v as Raw : fail('acp', 'must be a map')
  for (const key of Object.keys(raw)) if (!FIELDS.includes(key)) fail(`acp.${key}`, `unknown field (known: ${FIELDS.join(', ')})`)
  const out: AcpSpec = {
    permissionTimeoutMs: raw.permission_timeout === undefined ? ACP_PERMISSION_TIMEOUT : duration(raw.permission_timeout, 'acp.permission_timeout'),
    checkpointMs: raw.checkpoint_interval === undefined ? ACP_CHECKPOINT_INTERVAL : duration(raw.checkpoint_interval, 'acp.checkpoint_interval'),
    checkpointBytes: ACP_CHECKPOINT_BYTES,
    fs: oneOf(raw.fs, FS_MODES, 'acp.fs', 'read-write'),
    retry: oneOf(raw.retry, RETRY_MODES, 'acp.retry', 'none'),
    mcp: raw.mcp === undefined ? true : typeof raw.mcp === 'boolean' ? raw.mcp : fail('acp.mcp', 'must be true or false')
  }
  if (raw.checkpoint_bytes !== undefined) {
    const n = raw.checkpoint_bytes
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 256) fail('acp.checkpoint_bytes', 'must be an integer of at least 256')
    out.checkpointBytes = n
  }
  if (raw.approver !== undefined) {
    if (typeof raw.approver !== 'string' || raw.approver === '') fail('acp.approver', 'must be a node name or id')
    out.approver = raw.approver
  }
  return out
}
