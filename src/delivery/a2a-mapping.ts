// Packets to an external A2A agent and its answers back, the reverse of the
// mapping the A2A face applies to callers (docs/A2A.md, "Outbound"):
//   packet → Message: text and context as text parts, decision/options/result
//   as one data part, conversation_id → contextId, a reply into a task the
//   agent opened → that taskId; the amesh envelope in metadata.amesh.
//   answers → packets: a Message → RETURN; COMPLETED (its artifacts) → RETURN;
//   FAILED/REJECTED/CANCELED → ERROR; INPUT_REQUIRED → ESCALATE;
//   AUTH_REQUIRED → BLOCKED_ON; a WORKING status message → MESSAGE.
import { Role, TaskState, type Artifact, type Message, type Part, type TaskStatus } from '@a2a-js/sdk'
import { MAX_LIST_STRING, MAX_OPTIONS } from '../packet/fields.js'
import type { Packet, Payload, Signal } from '../packet/types.js'
import { cutText } from '../util/unicode.js'

/** longest text taken from an answer into one packet field (characters; the packet limit is 512 KiB of CBOR) */
export const ANSWER_TEXT_LIMIT = 100_000
/** the metadata key under which the amesh envelope travels */
export const AMESH_METADATA = 'amesh'

export interface Answer { signal: Signal, payload: Payload }

function textPart (text: string, metadata?: Record<string, unknown>): Part {
  return { content: { $case: 'text', value: text }, metadata, filename: '', mediaType: 'text/plain' }
}

function dataPart (value: Record<string, unknown>): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' }
}

function partsOf (payload: Payload): Part[] {
  const parts: Part[] = []
  if (payload.text !== undefined) parts.push(textPart(payload.text))
  if (typeof payload.context === 'string') parts.push(textPart(payload.context, { [AMESH_METADATA]: { field: 'context' } }))
  const rest: Record<string, unknown> = {}
  // a structured context travels as data, like the other structured fields
  if (payload.context !== undefined && typeof payload.context !== 'string') rest.context = payload.context
  if (payload.decision !== undefined) rest.decision = payload.decision
  if (payload.options !== undefined) rest.options = payload.options
  if (payload.result !== undefined) rest.result = payload.result
  if (Object.keys(rest).length > 0) parts.push(dataPart(rest))
  if (parts.length === 0) parts.push(textPart(''))
  return parts
}

/** The A2A message for a packet; `taskId` continues a task the agent opened ('' starts a new one). */
export function toA2aMessage (packet: Packet, contextId: string, taskId: string): Message {
  const envelope: Record<string, unknown> = { signal: packet.signal, from: packet.from, zone: packet.scope.zone }
  if (packet.from_name !== undefined) envelope.from_name = packet.from_name
  if (packet.in_reply_to !== undefined) envelope.in_reply_to = packet.in_reply_to
  if (packet.scope.files.length > 0) envelope.files = packet.scope.files
  return {
    messageId: packet.id,
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: partsOf(packet.payload),
    metadata: { [AMESH_METADATA]: envelope },
    extensions: [],
    referenceTaskIds: []
  }
}

function clip (text: string): string {
  if (text.length <= ANSWER_TEXT_LIMIT) return text
  const kept = cutText(text, ANSWER_TEXT_LIMIT)
  return `${kept}\n[truncated: ${text.length - kept.length} more characters]`
}

function partText (part: Part): string | undefined {
  const c = part.content
  if (c === undefined) return undefined
  if (c.$case === 'text') return c.value
  if (c.$case === 'data') return JSON.stringify(c.value)
  if (c.$case === 'url') return c.value
  return `[${part.mediaType === '' ? 'file' : part.mediaType}${part.filename === '' ? '' : ` ${part.filename}`}: ${c.value.byteLength} bytes]`
}

/** The text of some parts, one per line ('' when there is none). */
export function textOf (parts: readonly Part[] | undefined): string {
  return clip((parts ?? []).map(partText).filter((t): t is string => t !== undefined && t !== '').join('\n'))
}

/** String options an agent offered in a data part (`{options: [...]}`), bounded as a packet's are. */
function optionsOf (parts: readonly Part[] | undefined): string[] {
  for (const part of parts ?? []) {
    const c = part.content
    if (c?.$case !== 'data' || c.value === null || typeof c.value !== 'object') continue
    const opts = (c.value as { options?: unknown }).options
    if (Array.isArray(opts)) {
      const strings = opts.filter((o): o is string => typeof o === 'string' && o !== '' && o.length <= MAX_LIST_STRING)
      if (strings.length > 0) return strings.slice(0, MAX_OPTIONS)
    }
  }
  return ['reply']
}

/** A direct Message answer: the agent's reply. */
export function messageAnswer (m: Message): Answer {
  return { signal: 'RETURN', payload: { result: textOf(m.parts) } }
}

export const TERMINAL: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED])
export const INTERRUPTED: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED])

function stateName (s: TaskState): string {
  return (TaskState[s] ?? String(s)).replace(/^TASK_STATE_/, '')
}

/** A terminal state's answer, with the task's artifacts for COMPLETED. */
export function finalAnswer (taskId: string, status: TaskStatus, artifacts: readonly Artifact[]): Answer {
  const said = textOf(status.message?.parts)
  if (status.state === TaskState.TASK_STATE_COMPLETED) {
    const result = [textOf(artifacts.flatMap((a) => a.parts)), said].filter((t) => t !== '').join('\n')
    return { signal: 'RETURN', payload: { result } }
  }
  return { signal: 'ERROR', payload: { context: said !== '' ? `task ${taskId} ${stateName(status.state)}: ${said}` : `task ${taskId} ${stateName(status.state)}` } }
}

/** An interrupted state's answer: the agent asks the sender (ESCALATE) or is blocked on authentication (BLOCKED_ON). */
export function interruptAnswer (taskId: string, status: TaskStatus): Answer {
  const said = textOf(status.message?.parts)
  if (status.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
    const payload: Payload = { options: optionsOf(status.message?.parts) }
    if (said !== '') payload.text = said
    return { signal: 'ESCALATE', payload }
  }
  return { signal: 'BLOCKED_ON', payload: { context: said !== '' ? said : `task ${taskId} needs authentication` } }
}

/** A status message while the task works: MESSAGE (undefined when there is nothing to say). */
export function progressAnswer (status: TaskStatus): Answer | undefined {
  const said = textOf(status.message?.parts)
  return said === '' ? undefined : { signal: 'MESSAGE', payload: { text: said } }
}
