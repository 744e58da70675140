// session/request_permission → an ESCALATE to the approver; the approver's
// verdict (`amesh approve|deny ID`, the MCP approve/deny tools, or a reply to
// the ESCALATE naming an option) → the ACP outcome. Only a verdict from the
// approver's node id counts; none within the timeout → cancelled.
import { stringOf } from '../packet/json-value.js'
import { randomBytes } from 'node:crypto'
import type { PermissionOption, RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk'
import type { RenderedPacket } from '../packet/render.js'
import { permissionConversation, permissionRequestId } from '../control/permission.js'
import { PREVIEW_CHARS } from './constants.js'

export interface Asked {
  /** the node id verdicts must come from */
  approverId: string
  /** send the ESCALATE (text, option ids, conversation id); returns its message id */
  escalate: (text: string, options: string[], conversation: string) => Promise<string>
  timeoutMs: number
  /** the prompt was cancelled meanwhile */
  signal: AbortSignal
}

interface Pending {
  escalateId?: string
  approverId: string
  options: PermissionOption[]
  settle: (r: RequestPermissionResponse) => void
}

const ALLOW = /^(allow|allowed|approve|approved|yes)$/i
const DENY = /^(deny|denied|reject|rejected|no)$/i

function requestId (): string {
  return [...randomBytes(10)].map((b) => String.fromCharCode(97 + (b % 26))).join('')
}

function clip (s: string): string {
  return s.length <= PREVIEW_CHARS ? s : `${s.slice(0, PREVIEW_CHARS)}… (${s.length - PREVIEW_CHARS} more characters)`
}

function preview (req: RequestPermissionRequest): string {
  const input = req.toolCall.rawInput
  if (input !== undefined) return clip(typeof input === 'string' ? input : JSON.stringify(input))
  const text = (req.toolCall.content ?? []).map((c) => c.type === 'content' && c.content.type === 'text' ? c.content.text : c.type).join(' ')
  return clip(text)
}

/** The option a verdict names: an option id, or allow/deny mapped to the agent's once/always kinds. */
export function chooseOption (options: PermissionOption[], word: string): PermissionOption | undefined {
  const exact = options.find((o) => o.optionId === word) ?? options.find((o) => o.optionId.toLowerCase() === word.toLowerCase())
  if (exact !== undefined) return exact
  const kinds = ALLOW.test(word) ? ['allow_once', 'allow_always'] : DENY.test(word) ? ['reject_once', 'reject_always'] : []
  for (const k of kinds) {
    const o = options.find((x) => x.kind === k)
    if (o !== undefined) return o
  }
  return undefined
}

export class Permissions {
  private readonly pending = new Map<string, Pending>()

  constructor (private readonly log: (line: string) => void) {}

  get waiting (): number { return this.pending.size }

  /** Ask the approver; resolves with the ACP outcome (cancelled on timeout or cancel). */
  async ask (req: RequestPermissionRequest, asked: Asked): Promise<RequestPermissionResponse> {
    const rid = requestId()
    const title = req.toolCall.title ?? req.toolCall.name ?? req.toolCall.toolCallId
    const text = [
      `Permission request ${rid} from an ACP agent: tool ${title}${req.toolCall.kind !== undefined && req.toolCall.kind !== null ? ` (${req.toolCall.kind})` : ''}`,
      `input: ${preview(req)}`,
      `options: ${req.options.map((o) => `${o.optionId} = ${o.name} (${o.kind})`).join('; ')}`,
      `Answer: amesh approve ${rid} / amesh deny ${rid}, or reply naming an option id.`
    ].join('\n')
    return await new Promise<RequestPermissionResponse>((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const settle = (r: RequestPermissionResponse): void => {
        if (!this.pending.delete(rid)) return
        clearTimeout(timer)
        asked.signal.removeEventListener('abort', onAbort)
        resolve(r)
      }
      const onAbort = (): void => settle({ outcome: { outcome: 'cancelled' } })
      const entry: Pending = { approverId: asked.approverId, options: req.options, settle }
      this.pending.set(rid, entry)
      asked.signal.addEventListener('abort', onAbort)
      timer = setTimeout(() => {
        this.log(`permission ${rid}: no verdict within ${asked.timeoutMs} ms: cancelled`)
        settle({ outcome: { outcome: 'cancelled' } })
      }, asked.timeoutMs)
      asked.escalate(text, req.options.map((o) => o.optionId), permissionConversation(rid)).then((id) => {
        entry.escalateId = id
        this.log(`permission ${rid} (${title}) asked as ESCALATE ${id}`)
      }, (err: unknown) => {
        this.log(`permission ${rid}: ESCALATE not sent: ${err instanceof Error ? err.message : String(err)}`)
        settle({ outcome: { outcome: 'cancelled' } })
      })
    })
  }

  private find (p: RenderedPacket): [string, Pending] | undefined {
    const rid = permissionRequestId(p.conversation_id)
    if (rid !== undefined) {
      const e = this.pending.get(rid)
      return e === undefined ? undefined : [rid, e]
    }
    for (const [rid, e] of this.pending) if (e.escalateId !== undefined && e.escalateId === p.in_reply_to) return [rid, e]
    return undefined
  }

  /** Whether the packet is a verdict (then it is consumed); a valid one settles its request. */
  consume (p: RenderedPacket): boolean {
    const inRelay = permissionRequestId(p.conversation_id) !== undefined
    const found = this.find(p)
    if (found === undefined) {
      if (!inRelay) return false
      this.log(`verdict ${p.id} from ${p.from} dropped: unknown, answered or expired request`)
      return true
    }
    const [rid, e] = found
    if (p.from_id !== e.approverId) { this.log(`verdict ${p.id} for ${rid} dropped: ${p.from} is not the approver`); return true }
    const body = p.payload.text ?? stringOf(p.payload.result) ?? stringOf(p.payload.decision) ?? ''
    const [word = '', named] = body.trim().split(/[\s:]+/)
    if (named !== undefined && /^[a-z]+$/.test(named) && named !== rid && inRelay) {
      this.log(`verdict ${p.id} dropped: it names request ${named}, not ${rid}`)
      return true
    }
    const option = chooseOption(e.options, word)
    if (option === undefined) {
      this.log(`permission ${rid}: "${word}" from ${p.from} names no option: cancelled`)
      e.settle({ outcome: { outcome: 'cancelled' } })
      return true
    }
    this.log(`permission ${rid}: ${option.optionId} (${option.kind}) from ${p.from}`)
    e.settle({ outcome: { outcome: 'selected', optionId: option.optionId } })
    return true
  }
}
