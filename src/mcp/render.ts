import { isPermissionRequest, permissionRequestId } from '../control/permission.js'
import type { RenderedPacket } from '../control/wire.js'
import { optionText, valueText } from '../packet/json-value.js'

/** The params of one `notifications/claude/channel` event. */
export interface ChannelEvent {
  content: string
  meta: Record<string, string>
}

const META_KEY = /^[A-Za-z0-9_]+$/

/** A readable body: the text for MESSAGE, otherwise the signal's payload fields, labelled. */
export function contentOf (p: RenderedPacket): string {
  const pl = p.payload
  if (p.signal === 'MESSAGE' && pl.context === undefined) return pl.text ?? ''
  const parts: string[] = []
  if (pl.text !== undefined) parts.push(pl.text)
  // structured values as compact JSON (one line), strings as they are
  if (pl.context !== undefined) parts.push(`context: ${valueText(pl.context)}`)
  if (pl.decision !== undefined) parts.push(`decision: ${valueText(pl.decision)}`)
  if (pl.result !== undefined) parts.push(`result: ${valueText(pl.result)}`)
  if (pl.options !== undefined) parts.push(`options: ${pl.options.map(optionText).join(' | ')}`)
  const body = parts.join('\n')
  return p.signal === 'MESSAGE' ? body : `[${p.signal}] ${body}`
}

/** Channel meta: identifier keys, string values only (Claude Code drops anything else silently). */
export function metaOf (p: RenderedPacket): Record<string, string> {
  const meta: Record<string, string> = {
    from: p.from,
    from_id: p.from_id,
    msg_id: p.id,
    seq: String(p.seq),
    signal: p.signal,
    ts: new Date(p.ts).toISOString()
  }
  const optional: Array<[string, unknown]> = [
    ['conversation_id', p.conversation_id],
    ['in_reply_to', p.in_reply_to],
    ['requires_reply', p.requires_reply],
    ['priority', p.priority],
    // a member's copy of a broadcast: the broadcast id and the group's head
    ['broadcast', p.broadcast],
    ['group_id', p.group_id]
  ]
  for (const [key, value] of optional) {
    if (value !== undefined && value !== null) meta[key] = String(value)
  }
  const rid = isPermissionRequest(p) ? permissionRequestId(p.conversation_id) : undefined
  if (rid !== undefined) meta.permission_request_id = rid
  for (const key of Object.keys(meta)) {
    if (!META_KEY.test(key)) delete meta[key] // eslint-disable-line @typescript-eslint/no-dynamic-delete
  }
  return meta
}

export function channelEvent (p: RenderedPacket): ChannelEvent {
  return { content: contentOf(p), meta: metaOf(p) }
}
