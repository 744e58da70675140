// The permission-relay protocol, shared by the face that relays a prompt
// (src/mcp/permission.ts) and the daemon that answers it (`amesh approve|deny`,
// the approve/deny tools: the `permission.verdict` method).
//   request  an ESCALATE whose conversation_id is `permission:<request_id>`,
//            payload {text, options: ['allow', 'deny']}, requires_reply, priority high
//   verdict  a MESSAGE in that conversation replying to the ESCALATE (in_reply_to)
//            with text `allow <request_id>` or `deny <request_id>`
import { stringOf, type JsonValue } from '../packet/json-value.js'
import { z } from 'zod'
import type { SendParams } from './send-params.js'

export const PERMISSION_CONVERSATION_PREFIX = 'permission:'
/** the control method that answers a relayed request from this host */
export const PERMISSION_VERDICT_METHOD = 'permission.verdict'

export type Behavior = 'allow' | 'deny'
export const BEHAVIORS = ['allow', 'deny'] as const

export const requestIdSchema = z.string().regex(/^[a-z]{1,32}$/, 'a request id is lowercase letters')

export const permissionVerdictSchema = z.object({
  as: z.string().min(1).max(256).optional(),
  request_id: requestIdSchema,
  behavior: z.enum(BEHAVIORS)
}).strict()

export type PermissionVerdictParams = z.infer<typeof permissionVerdictSchema>

/** The conversation of a permission request. */
export function permissionConversation (requestId: string): string {
  return PERMISSION_CONVERSATION_PREFIX + requestId
}

/** The request id of a permission conversation, else undefined. */
export function permissionRequestId (conversationId: unknown): string | undefined {
  if (typeof conversationId !== 'string' || !conversationId.startsWith(PERMISSION_CONVERSATION_PREFIX)) return undefined
  return conversationId.slice(PERMISSION_CONVERSATION_PREFIX.length)
}

/** Whether a packet is the ESCALATE of the permission request `requestId` (any id when omitted). */
export function isPermissionRequest (p: { signal: string, conversation_id?: unknown }, requestId?: string): boolean {
  if (p.signal !== 'ESCALATE') return false
  const rid = permissionRequestId(p.conversation_id)
  return rid !== undefined && (requestId === undefined || rid === requestId)
}

/** The `send` params of a permission request from `as` to the approver `to`. */
export function permissionRequestSend (as: string, to: string, requestId: string, text: string): SendParams {
  return {
    as,
    to,
    signal: 'ESCALATE',
    payload: { text, options: [...BEHAVIORS] },
    conversation_id: permissionConversation(requestId),
    requires_reply: true,
    priority: 'high'
  }
}

/** The `send` params of a verdict on the request `escalate` (the ESCALATE as received). */
export function permissionVerdictSend (as: string, escalate: { id: string, from: string, conversation_id?: string }, requestId: string, behavior: Behavior): SendParams {
  return { as, to: escalate.from, text: `${behavior} ${requestId}`, in_reply_to: escalate.id, conversation_id: escalate.conversation_id }
}

const VERDICT_RE = /^\s*(allow|allowed|approve|approved|yes|deny|denied|reject|rejected|no)\b[\s:]*([a-z]+)?/i
const ALLOW_WORDS = ['allow', 'allowed', 'approve', 'approved', 'yes']

/** Parse `allow abcde` / `deny abcde` (also yes/no, approve/reject) from a verdict packet's payload. */
export function parseVerdict (p: { payload: { text?: string, result?: JsonValue, decision?: JsonValue, context?: JsonValue } }): { behavior: Behavior, requestId?: string } | undefined {
  const body = p.payload.text ?? stringOf(p.payload.result) ?? stringOf(p.payload.decision) ?? stringOf(p.payload.context) ?? ''
  const m = VERDICT_RE.exec(body)
  if (m === null) return undefined
  const behavior: Behavior = ALLOW_WORDS.includes(m[1].toLowerCase()) ? 'allow' : 'deny'
  return { behavior, requestId: m[2]?.toLowerCase() }
}
