import { parseVerdict, permissionRequestId, permissionRequestSend, type Behavior } from '../control/permission.js'
import type { RenderedPacket } from '../control/wire.js'
import type { Logger } from '../util/log.js'
import { cutText, wellFormed } from '../util/unicode.js'
import { PERMISSION_MAX_PENDING, PERMISSION_TTL, PREVIEW_CHARS } from './constants.js'
import type { DaemonLink } from './link.js'

/** `notifications/claude/channel/permission_request` params (Claude Code ≥ 2.1.81). */
export interface PermissionRequest {
  request_id: string
  tool_name: string
  description: string
  input_preview: string
}

export { parseVerdict, type Behavior }

export interface PermissionVerdict {
  request_id: string
  behavior: Behavior
}

interface Pending {
  escalateId: string
  expires: number
}

export interface PermissionRelayInit {
  link: DaemonLink
  /** this session's node name */
  node: string
  /** the approver node's name or id */
  approver: string
  /** write the verdict to Claude Code */
  relay: (verdict: PermissionVerdict) => Promise<void>
  log: Logger
  ttl?: number
  now?: () => number
}

/** At most n characters of s, never cutting a surrogate pair in half. */
function clip (s: string, n = PREVIEW_CHARS): string {
  if (s.length <= n) return s
  const kept = cutText(s, n)
  return `${kept}… (${s.length - kept.length} more characters)`
}

/**
 * Relays Claude Code permission prompts to an approver node as ESCALATE packets
 * and relays that node's verdicts (and only that node's, authenticated by the
 * mesh's channel binding) back. Unknown, answered or expired request ids are dropped.
 */
export class PermissionRelay {
  private readonly pending = new Map<string, Pending>()
  private approverId?: string
  private readonly ttl: number
  private readonly now: () => number

  constructor (private readonly init: PermissionRelayInit) {
    this.ttl = init.ttl ?? PERMISSION_TTL
    this.now = init.now ?? Date.now
  }

  /** Resolve the approver's node id (the id verdicts must come from). */
  async approver (): Promise<string> {
    this.approverId ??= (await this.init.link.call('node.resolve', { target: this.init.approver })).id
    return this.approverId
  }

  /** Claude Code asked: forward the request as an ESCALATE to the approver. */
  async request (req: PermissionRequest): Promise<void> {
    this.expire()
    if (this.pending.size >= PERMISSION_MAX_PENDING) {
      this.init.log(`permission request ${req.request_id} not relayed: ${PERMISSION_MAX_PENDING} requests already wait for a verdict`)
      return
    }
    const to = await this.approver()
    // Claude Code's words: a lone surrogate in them becomes U+FFFD (the packet would be refused, and the request not relayed)
    const text = wellFormed([
      `Permission request ${req.request_id} from Claude Code session "${this.init.node}":`,
      `tool: ${req.tool_name}`,
      `description: ${clip(req.description)}`,
      `input: ${clip(req.input_preview)}`,
      `Answer with the approve / deny tool (request_id ${req.request_id}), or on your host: amesh approve ${req.request_id} / amesh deny ${req.request_id}.`
    ].join('\n'))
    const sent = await this.init.link.call('send', permissionRequestSend(this.init.node, to, req.request_id, text))
    this.pending.set(req.request_id, { escalateId: sent.id, expires: this.now() + this.ttl })
    this.init.log(`permission request ${req.request_id} (${req.tool_name}) sent to ${this.init.approver} as ${sent.id}`)
  }

  /**
   * Whether a packet belongs to a permission conversation (then it is consumed:
   * never shown to Claude). A verdict from the approver for a pending id is relayed.
   */
  async consume (p: RenderedPacket): Promise<boolean> {
    const conversationRid = permissionRequestId(p.conversation_id)
    if (conversationRid === undefined || p.signal === 'ESCALATE') return false
    const verdict = parseVerdict(p)
    const rid = verdict?.requestId ?? conversationRid
    const reason = await this.reject(p, rid, verdict)
    if (reason !== undefined) {
      this.init.log(`permission verdict ${p.id} from ${p.from} (${p.from_id}) dropped: ${reason}`)
      return true
    }
    this.pending.delete(rid)
    await this.init.relay({ request_id: rid, behavior: verdict?.behavior ?? 'deny' })
    this.init.log(`permission request ${rid}: ${verdict?.behavior ?? 'deny'} from ${p.from}`)
    return true
  }

  private async reject (p: RenderedPacket, rid: string, verdict: ReturnType<typeof parseVerdict>): Promise<string | undefined> {
    this.expire()
    if (verdict === undefined) return 'not a verdict (expected "allow ID" or "deny ID")'
    if (p.from_id !== await this.approver().catch(() => undefined)) return 'not from the approver'
    const pending = this.pending.get(rid)
    if (pending === undefined) return `unknown, answered or expired request id ${rid}`
    if (p.in_reply_to !== undefined && p.in_reply_to !== pending.escalateId) return 'replies to a different request'
    return undefined
  }

  private expire (): void {
    const now = this.now()
    for (const [rid, p] of this.pending) if (p.expires <= now) this.pending.delete(rid)
  }
}
