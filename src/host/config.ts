import { readFileSync } from 'node:fs'
import { DEFAULT_DESTINATIONS, parseDestinations, type DestinationPolicy } from '../authz/signal-destination.js'
import { DEFAULT_LISTEN } from '../control/home.js'
import { parse } from 'yaml'
import { DURABILITY_MODES, type Durability } from '../store/db.js'
import { DEFAULT_MIN_FREE_BYTES } from '../store/store-guard.js'
import { ConfigError } from '../util/errors.js'
import { DAY, HOUR, SECOND } from '../util/time.js'

export { DEFAULT_PORT } from '../control/home.js'

/** The host configuration: defaults, overridden by the home's config.yaml, then by flags. */
export interface HostConfig {
  listen: string[]
  peers: string[]
  mdns: boolean
  durability: Durability
  /** low-space watermark, bytes: writes are refused (STORE_FULL) while the store's disk has less free; 0 = off */
  storeMinFreeBytes: number
  /** packets waiting per destination host before `send` fails */
  outboxPerDestination: number
  /** unacknowledged packets per node inbox before the host refuses more (the sender retries) */
  inboxPerNode: number
  /** default packet time-to-live in the outbox, ms */
  ttl: number
  /** acked inbox entries are pruned after this age, ms */
  retentionAge: number
  /** ...and beyond this many acked entries per node */
  retentionKeep: number
  /** duplicate message ids are remembered this long, ms; older packets are refused as stale */
  dedupWindow: number
  /** dead letters are kept this long, ms */
  deadRetention: number
  /** lineage depth limit: 1 = a child may not start children */
  maxDepth: number
  /** denied-attempt notices: at most one per sender per window, ms */
  deniedNoticeWindow: number
  /** access-matrix profiles by node name, applied to local nodes at start and on creation */
  profiles: Record<string, unknown>
  /** local nodes (by name) whose host never reports `read` receipts to senders (docs/DELIVERY.md) */
  hideReadReceipts: string[]
  /** where CHECKPOINT, HANDOFF and RETURN may go (docs/SECURITY.md "Signal destinations"); config `signal_destinations` */
  signalDestinations: DestinationPolicy
}

export function defaultConfig (): HostConfig {
  return {
    listen: [...DEFAULT_LISTEN],
    peers: [],
    mdns: true,
    durability: 'batch',
    storeMinFreeBytes: DEFAULT_MIN_FREE_BYTES,
    outboxPerDestination: 100_000,
    inboxPerNode: 100_000,
    ttl: DAY,
    retentionAge: HOUR,
    retentionKeep: 1000,
    dedupWindow: 7 * DAY,
    deadRetention: 7 * DAY,
    maxDepth: 1,
    deniedNoticeWindow: 60 * SECOND,
    profiles: {},
    hideReadReceipts: [],
    signalDestinations: { ...DEFAULT_DESTINATIONS }
  }
}

type Raw = Record<string, unknown>

function num (raw: Raw, key: string, fallback: number): number {
  const v = raw[key]
  if (v === undefined) return fallback
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ConfigError(`config: ${key} must be a non-negative number`)
  return v
}

function strList (raw: Raw, key: string, fallback: string[]): string[] {
  const v = raw[key]
  if (v === undefined) return fallback
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new ConfigError(`config: ${key} must be a list of strings`)
  return v as string[]
}

export function parseDurability (v: unknown): Durability {
  if (typeof v !== 'string' || !(DURABILITY_MODES as readonly string[]).includes(v)) {
    throw new ConfigError(`durability must be one of ${DURABILITY_MODES.join(', ')} (got ${String(v)})`)
  }
  return v as Durability
}

const KNOWN_KEYS = new Set(['listen', 'peers', 'mdns', 'durability', 'store_min_free_bytes', 'outbox_per_destination', 'inbox_per_node', 'ttl_ms', 'retention_age_ms', 'retention_keep', 'dedup_window_ms', 'dead_retention_ms', 'policy', 'denied_notice_window_ms', 'profiles', 'hide_read_receipts', 'signal_destinations'])

function policyDepth (raw: Raw, fallback: number): number {
  const p = raw.policy
  if (p === undefined) return fallback
  if (typeof p !== 'object' || p === null) throw new ConfigError('config: policy must be a map')
  return num(p as Raw, 'max_depth', fallback)
}

function profilesOf (raw: Raw, fallback: Record<string, unknown>): Record<string, unknown> {
  const p = raw.profiles
  if (p === undefined) return fallback
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new ConfigError('config: profiles must map node names to profiles')
  return p as Record<string, unknown>
}

/** Parse a config file's content over the defaults; unknown keys are errors. */
export function parseConfig (text: string, base: HostConfig = defaultConfig()): HostConfig {
  const raw: unknown = text.trim() === '' ? {} : parse(text)
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError('config: the file must hold a map')
  const r = raw as Raw
  for (const key of Object.keys(r)) {
    if (!KNOWN_KEYS.has(key)) throw new ConfigError(`config: unknown key "${key}"`)
  }
  if (r.mdns !== undefined && typeof r.mdns !== 'boolean') throw new ConfigError('config: mdns must be true or false')
  return {
    listen: strList(r, 'listen', base.listen),
    peers: strList(r, 'peers', base.peers),
    mdns: (r.mdns as boolean | undefined) ?? base.mdns,
    durability: r.durability === undefined ? base.durability : parseDurability(r.durability),
    storeMinFreeBytes: num(r, 'store_min_free_bytes', base.storeMinFreeBytes),
    outboxPerDestination: num(r, 'outbox_per_destination', base.outboxPerDestination),
    inboxPerNode: num(r, 'inbox_per_node', base.inboxPerNode),
    ttl: num(r, 'ttl_ms', base.ttl),
    retentionAge: num(r, 'retention_age_ms', base.retentionAge),
    retentionKeep: num(r, 'retention_keep', base.retentionKeep),
    dedupWindow: num(r, 'dedup_window_ms', base.dedupWindow),
    deadRetention: num(r, 'dead_retention_ms', base.deadRetention),
    maxDepth: policyDepth(r, base.maxDepth),
    deniedNoticeWindow: num(r, 'denied_notice_window_ms', base.deniedNoticeWindow),
    profiles: profilesOf(r, base.profiles),
    hideReadReceipts: strList(r, 'hide_read_receipts', base.hideReadReceipts),
    signalDestinations: r.signal_destinations === undefined ? base.signalDestinations : parseDestinations(r.signal_destinations, (m) => new ConfigError(m))
  }
}

export function loadConfigFile (path: string): HostConfig {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return defaultConfig()
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`)
  }
  return parseConfig(text)
}

/** mDNS is off when AMESH_MDNS is off/0/false/no, whatever the file says. */
export function mdnsFromEnv (cfg: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.AMESH_MDNS?.toLowerCase()
  if (v === undefined || v === '') return cfg
  if (['off', '0', 'false', 'no'].includes(v)) return false
  if (['on', '1', 'true', 'yes'].includes(v)) return cfg
  return cfg
}
