import { readFileSync } from 'node:fs'
import { DEFAULT_DESTINATIONS, parseDestinations, type DestinationPolicy } from '../authz/signal-destination.js'
import { DEFAULT_LISTEN } from '../control/home.js'
import { parse } from 'yaml'
import { DURABILITY_MODES, type Durability } from '../store/db.js'
import { DEFAULT_MIN_FREE_BYTES } from '../store/store-guard.js'
import { ConfigError } from '../util/errors.js'
import { DAY, HOUR, MINUTE, SECOND } from '../util/time.js'

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
  /** serving as a circuit relay for other hosts (docs/DISCOVERY.md "Behind a NAT") */
  relay: RelayConfig
  /** relays to keep connected and reserve a slot on when this host is not publicly reachable (multiaddrs with /p2p/<id>) */
  relays: string[]
  /** the A2A face (issue 13): off (undefined) by default */
  a2a?: A2aConfig
  /** where CHECKPOINT, HANDOFF and RETURN may go (docs/SECURITY.md "Signal destinations"); config `signal_destinations` */
  signalDestinations: DestinationPolicy
}

/** Who may reserve a slot on a relay: any amesh host, or only hosts one of whose nodes holds the operator's host grant of /relay/reserve. */
export const RELAY_ACCEPT = ['any', 'granted'] as const
export type RelayAccept = typeof RELAY_ACCEPT[number]

export interface RelayConfig {
  /** serve as a relay (opt-in) */
  serve: boolean
  /** reservations held at once */
  maxReservations: number
  /** a relayed connection is closed after this long, ms (the hosts then reconnect) */
  durationLimit: number
  /** ...or after this many bytes both ways */
  dataLimit: number
  accept: RelayAccept
  /** how soon this host asks a relay, and dials a bootstrap peer, again */
  retry: RelayRetry
}

/**
 * How soon a host tries again (config `relay.retry`, docs/DISCOVERY.md "Behind a NAT"), ms.
 * Reservations are asked of connected relays at each check; a bootstrap peer
 * (`peers`, `relays`, `amesh join`) is how a relay gets connected again.
 */
export interface RelayRetry {
  /** a relay that refused a reservation is asked again after this long, doubling per refusal to refusedMax (at once when it reconnects) */
  refused: number
  refusedMax: number
  /** a reservation that failed for another reason (no answer, libp2p's own attempt in the way) is tried again after this long */
  failed: number
  /** connected relays are looked at this often (a lost reservation, a relay that came back, a retry that is due) */
  check: number
  /** a bootstrap peer this host is not connected to is dialled again after this long, doubling per failed dial to redialMax */
  redial: number
  redialMax: number
}

export const RELAY_REFUSED_RETRY = 30 * SECOND
export const RELAY_REFUSED_RETRY_MAX = 2 * MINUTE
export const RELAY_FAILED_RETRY = 5 * SECOND
export const RELAY_CHECK = 5 * SECOND
export const REDIAL_MIN = 5 * SECOND
export const REDIAL_MAX = MINUTE
/** No retry setting may be shorter (a shorter one would spin). */
export const RELAY_RETRY_FLOOR = 100

export function defaultRelayRetry (): RelayRetry {
  return { refused: RELAY_REFUSED_RETRY, refusedMax: RELAY_REFUSED_RETRY_MAX, failed: RELAY_FAILED_RETRY, check: RELAY_CHECK, redial: REDIAL_MIN, redialMax: REDIAL_MAX }
}

/** A relayed connection lasts at most this long by default (libp2p's default: 2 minutes). */
export const RELAY_DURATION_LIMIT = 30 * MINUTE
/** ...and carries at most this many bytes (libp2p's default: 128 KiB). */
export const RELAY_DATA_LIMIT = 256 * 1024 * 1024
/** Reservations a relay holds at once by default (libp2p's default: 15). */
export const RELAY_MAX_RESERVATIONS = 64

export function defaultRelayConfig (): RelayConfig {
  return { serve: false, maxReservations: RELAY_MAX_RESERVATIONS, durationLimit: RELAY_DURATION_LIMIT, dataLimit: RELAY_DATA_LIMIT, accept: 'any', retry: defaultRelayRetry() }
}

// --- the A2A face's settings (issue 13, `a2a:` in config.yaml; docs/A2A.md) ---

export interface A2aConfig {
  /** host:port to listen on; default loopback. Any other address is an explicit choice and expects cert/key */
  listen: string
  /** TLS certificate and key files (PEM); without both the face speaks plain HTTP */
  cert?: string
  key?: string
  /** the base URL cards announce (default: http(s)://<listen>) */
  publicUrl?: string
  /** request body limit, bytes */
  bodyLimit: number
  /** requests per minute per credential */
  ratePerMinute: number
}

export const A2A_DEFAULT_BODY_LIMIT = 1024 * 1024
export const A2A_DEFAULT_RATE_PER_MINUTE = 600
const A2A_KEYS = new Set(['listen', 'cert', 'key', 'public_url', 'body_limit', 'rate_per_minute'])

/** `host:port` with a port; IPv6 hosts in brackets. */
export function parseA2aListen (v: string): string {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v)
  if (m === null || Number(m[2]) > 65535) throw new ConfigError(`a2a listen must be HOST:PORT (e.g. 127.0.0.1:8470); got "${v}"`)
  return v
}

function optText (raw: Raw, key: string): string | undefined {
  const v = raw[key]
  if (v === undefined) return undefined
  if (typeof v !== 'string' || v === '') throw new ConfigError(`config: a2a.${key} must be a string`)
  return v
}

/** The `a2a:` block: `{listen, cert?, key?, public_url?, body_limit?, rate_per_minute?}`; absent = off. */
export function parseA2aBlock (v: unknown, base: A2aConfig | undefined): A2aConfig | undefined {
  if (v === undefined) return base
  if (v === null || v === false) return undefined
  if (typeof v !== 'object' || Array.isArray(v)) throw new ConfigError('config: a2a must be a map with listen: HOST:PORT')
  const r = v as Raw
  for (const key of Object.keys(r)) if (!A2A_KEYS.has(key)) throw new ConfigError(`config: unknown key "a2a.${key}"`)
  if (typeof r.listen !== 'string') throw new ConfigError('config: a2a.listen (HOST:PORT) is required')
  const cert = optText(r, 'cert')
  const key = optText(r, 'key')
  if ((cert === undefined) !== (key === undefined)) throw new ConfigError('config: a2a.cert and a2a.key go together')
  return {
    listen: parseA2aListen(r.listen),
    cert,
    key,
    publicUrl: optText(r, 'public_url'),
    bodyLimit: num(r, 'body_limit', A2A_DEFAULT_BODY_LIMIT),
    ratePerMinute: num(r, 'rate_per_minute', A2A_DEFAULT_RATE_PER_MINUTE)
  }
}

/** `amesh up --a2a HOST:PORT`: the configured block with its listen address replaced. */
export function a2aFromFlag (listen: string, base: A2aConfig | undefined): A2aConfig {
  return { bodyLimit: A2A_DEFAULT_BODY_LIMIT, ratePerMinute: A2A_DEFAULT_RATE_PER_MINUTE, ...base, listen: parseA2aListen(listen) }
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
    relay: defaultRelayConfig(),
    relays: [],
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

const KNOWN_KEYS = new Set(['listen', 'peers', 'mdns', 'durability', 'store_min_free_bytes', 'outbox_per_destination', 'inbox_per_node', 'ttl_ms', 'retention_age_ms', 'retention_keep', 'dedup_window_ms', 'dead_retention_ms', 'policy', 'denied_notice_window_ms', 'profiles', 'hide_read_receipts', 'relay', 'relays', 'a2a', 'signal_destinations'])

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

const RELAY_KEYS = new Set(['serve', 'max_reservations', 'limits', 'accept', 'retry'])
const RETRY_KEYS: Record<string, keyof RelayRetry> = { refused: 'refused', refused_max: 'refusedMax', failed: 'failed', check: 'check', redial: 'redial', redial_max: 'redialMax' }

/** `relay.retry`: {refused, refused_max, failed, check, redial, redial_max}, each a duration of at least 100 ms; a max not below its start. */
export function parseRelayRetry (raw: unknown, base: RelayRetry = defaultRelayRetry()): RelayRetry {
  if (raw === undefined) return base
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`config: relay.retry must be a map {${Object.keys(RETRY_KEYS).join(', ')}}`)
  const out = { ...base }
  for (const [key, v] of Object.entries(raw as Raw)) {
    const field = RETRY_KEYS[key]
    if (field === undefined) throw new ConfigError(`config: unknown key "relay.retry.${key}"`)
    out[field] = parseDuration(v, `relay.retry.${key}`)
    if (out[field] < RELAY_RETRY_FLOOR) throw new ConfigError(`config: relay.retry.${key} must be at least ${RELAY_RETRY_FLOOR}ms (got ${String(v)})`)
  }
  if (out.refusedMax < out.refused) throw new ConfigError('config: relay.retry.refused_max must not be shorter than relay.retry.refused')
  if (out.redialMax < out.redial) throw new ConfigError('config: relay.retry.redial_max must not be shorter than relay.retry.redial')
  return out
}

function relayLimits (raw: unknown, base: RelayConfig): Pick<RelayConfig, 'durationLimit' | 'dataLimit'> {
  if (raw === undefined) return { durationLimit: base.durationLimit, dataLimit: base.dataLimit }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError('config: relay.limits must be a map {duration, data}')
  const r = raw as Raw
  for (const key of Object.keys(r)) if (key !== 'duration' && key !== 'data') throw new ConfigError(`config: unknown key "relay.limits.${key}"`)
  const durationLimit = r.duration === undefined ? base.durationLimit : parseDuration(r.duration, 'relay.limits.duration')
  const dataLimit = num(r, 'data', base.dataLimit)
  if (durationLimit < SECOND || dataLimit < 64 * 1024) throw new ConfigError('config: relay.limits must be at least 1s and 65536 bytes')
  return { durationLimit, dataLimit }
}

/** `relay:` of config.yaml: {serve, max_reservations, limits: {duration, data}, accept: any|granted, retry}. */
export function parseRelay (raw: unknown, base: RelayConfig = defaultRelayConfig()): RelayConfig {
  if (raw === undefined) return base
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError('config: relay must be a map')
  const r = raw as Raw
  for (const key of Object.keys(r)) if (!RELAY_KEYS.has(key)) throw new ConfigError(`config: unknown key "relay.${key}"`)
  if (r.serve !== undefined && typeof r.serve !== 'boolean') throw new ConfigError('config: relay.serve must be true or false')
  if (r.accept !== undefined && !(RELAY_ACCEPT as readonly unknown[]).includes(r.accept)) throw new ConfigError(`config: relay.accept must be one of ${RELAY_ACCEPT.join(', ')}`)
  return {
    serve: (r.serve as boolean | undefined) ?? base.serve,
    maxReservations: num(r, 'max_reservations', base.maxReservations),
    ...relayLimits(r.limits, base),
    accept: (r.accept as RelayAccept | undefined) ?? base.accept,
    retry: parseRelayRetry(r.retry, base.retry)
  }
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR }

/** A duration: a number of ms, or a string such as 15s, 30m, 2h. */
function parseDuration (v: unknown, key: string): number {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v.trim()) : null
  if (m === null) throw new ConfigError(`config: ${key} must be a duration such as 15s, 30m or 2h (got ${String(v)})`)
  return Number(m[1]) * DURATION_UNITS[m[2]]
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
    relay: parseRelay(r.relay, base.relay),
    relays: strList(r, 'relays', base.relays),
    a2a: parseA2aBlock(r.a2a, base.a2a),
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
