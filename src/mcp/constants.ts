import { SECOND, MINUTE } from '../util/time.js'
// Defaults of the Claude Code face, in readable units.


/** consecutive automatic replies per peer/conversation pair inside the window */
export const LOOP_LIMIT = 10
/** the loop guard's sliding window */
export const LOOP_WINDOW = 10 * MINUTE
/** a relayed permission request is forgotten after this long (late verdicts are dropped) */
export const PERMISSION_TTL = 15 * MINUTE
/** at most this many permission requests wait for a verdict at once */
export const PERMISSION_MAX_PENDING = 64
/** characters of input_preview / description forwarded to the approver */
export const PREVIEW_CHARS = 2000
/** packets the `inbox` tool returns by default */
export const INBOX_DEFAULT = 20
/** unread backlog messages pushed again to a new attachment (the rest: the inbox tool) */
export const REPUSH_LIMIT = 200
/** delay before reconnecting to the daemon after the control connection dropped */
export const RECONNECT_DELAY = SECOND
/** the MCP server name used in .mcp.json and the `claude` command line */
export const SERVER_NAME = 'amesh'

export const CHANNEL_METHOD = 'notifications/claude/channel'
export const PERMISSION_METHOD = 'notifications/claude/channel/permission'
export const PERMISSION_REQUEST_METHOD = 'notifications/claude/channel/permission_request'
