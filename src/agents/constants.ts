// Defaults of managed nodes, in readable units.
import { SECOND, MINUTE } from '../util/time.js'

/** Protocol a host uses to ask another host to run a managed node. */
export const AGENTS_PROTOCOL = '/amesh/agents/1.0.0'
/** The command a host grant must cover for remote placement. */
export const AGENT_START_CMD = '/agent/start'

/** First restart delay; doubled per restart inside the window. */
export const DEFAULT_BACKOFF = SECOND
export const DEFAULT_BACKOFF_MAX = 30 * SECOND
/** More restarts than this inside DEFAULT_RESTART_WINDOW and the node is given up (state failed). */
export const DEFAULT_MAX_RESTARTS = 5
export const DEFAULT_RESTART_WINDOW = MINUTE
/** SIGTERM, then SIGKILL after this. */
export const DEFAULT_STOP_TIMEOUT = 10 * SECOND

/** Rotated output: the current file grows to this size, then shifts to .1 … .LOG_KEEP. */
export const LOG_MAX_BYTES = 1024 * 1024
export { LOG_FILE, LOG_KEEP } from '../control/agent-files.js'
export const STATE_FILE = 'state.json'
/** The host-level issuer key (dot-prefixed: no node name can collide with it). */
export const HOST_ISSUER_FILE = '.host-issuer.key'

/** A stopped node's last card lives this long, so peers drop it soon after. */
export const WITHDRAW_GRACE = 5 * SECOND
/** Placement requests: bound on message size and on the whole exchange. */
export const PLACEMENT_MAX_MESSAGE = 256 * 1024
export const PLACEMENT_TIMEOUT = 30 * SECOND
/** Spec files larger than this are refused. */
export const MAX_SPEC_BYTES = 256 * 1024
