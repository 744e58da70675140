// A2A ↔ packets: an A2A message's parts as packet text, and a node's answer
// packet as the task events it means (docs/A2A.md, "Mapping").
import { Role, TaskState, type Artifact, type Message, type Part, type TaskStatus } from '@a2a-js/sdk'
import type { AgentExecutionEvent } from '@a2a-js/sdk/server'
import type { RenderedPacket } from '../control/wire.js'
import { optionText, valueText } from '../packet/json-value.js'
import { AmeshError } from '../util/errors.js'
import { MAX_PACKET_TEXT, META_KEY } from './constants.js'

export class A2aPartsTooLargeError extends AmeshError {
  constructor (bytes: number) {
    super('A2A_PARTS_TOO_LARGE', `the message's parts are ${bytes} bytes as packet text; a packet field holds at most ${MAX_PACKET_TEXT}`)
    this.name = 'A2aPartsTooLargeError'
  }
}

export class A2aUnsupportedPartError extends AmeshError {
  constructor (what: string) {
    super('A2A_UNSUPPORTED_PART', `${what} parts cannot travel in a packet; send text, data or url parts`)
    this.name = 'A2aUnsupportedPartError'
  }
}

function partText (p: Part): string {
  const c = p.content
  if (c === undefined) return ''
  switch (c.$case) {
    case 'text': return c.value
    case 'data': return JSON.stringify(c.value)
    case 'url': return c.value
    case 'raw': throw new A2aUnsupportedPartError('raw (file bytes)')
  }
}

/** The text a packet carries for an A2A message: its parts, one per paragraph; bounded by the packet limit. */
export function messageText (m: Message): string {
  const text = m.parts.map(partText).filter((t) => t !== '').join('\n\n')
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > MAX_PACKET_TEXT) throw new A2aPartsTooLargeError(bytes)
  return text === '' ? '(empty A2A message)' : text
}

export const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' })
const dataPart = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' })

/** An agent message on a task, carrying the packet it came from in its metadata. */
export function agentMessage (pkt: RenderedPacket, taskId: string, contextId: string, parts: Part[]): Message {
  return {
    messageId: pkt.id,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: { [META_KEY]: { packet: pkt.id, signal: pkt.signal, from: pkt.from } },
    extensions: [],
    referenceTaskIds: []
  }
}

function status (state: TaskState, message: Message): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() }
}

function statusEvent (taskId: string, contextId: string, s: TaskStatus): AgentExecutionEvent {
  return { kind: 'statusUpdate', data: { taskId, contextId, status: s, metadata: undefined } }
}

function artifactOf (pkt: RenderedPacket, text: string): Artifact {
  return { artifactId: pkt.id, name: 'result', description: `RETURN from ${pkt.from}`, parts: [textPart(text)], metadata: { [META_KEY]: { packet: pkt.id } }, extensions: [] }
}

/** What a node's packet means for the task it answers: status and artifact events, in order. */
export function eventsOfPacket (pkt: RenderedPacket, taskId: string, contextId: string): AgentExecutionEvent[] {
  const p = pkt.payload
  const msg = (parts: Part[]): Message => agentMessage(pkt, taskId, contextId, parts)
  switch (pkt.signal) {
    case 'RETURN': {
      const result = p.result === undefined ? '' : valueText(p.result)
      return [
        { kind: 'artifactUpdate', data: { taskId, contextId, artifact: artifactOf(pkt, result), append: false, lastChunk: true, metadata: undefined } },
        statusEvent(taskId, contextId, status(TaskState.TASK_STATE_COMPLETED, msg([textPart(result)])))
      ]
    }
    case 'ERROR':
      return [statusEvent(taskId, contextId, status(TaskState.TASK_STATE_FAILED, msg([textPart(p.context === undefined ? 'error' : valueText(p.context))])))]
    case 'ESCALATE': {
      const options = p.options ?? []
      const text = `${p.text ?? 'input required'}\noptions: ${options.map(optionText).join(' | ')}`
      return [statusEvent(taskId, contextId, status(TaskState.TASK_STATE_INPUT_REQUIRED, msg([textPart(text), dataPart({ options })])))]
    }
    default: {
      // BLOCKED_ON, CHECKPOINT, HANDOFF, MESSAGE, SPAWN: the task goes on, with a status message
      const text = [p.text, p.context, p.decision].filter((t): t is string => t !== undefined).join('\n')
      return [statusEvent(taskId, contextId, status(TaskState.TASK_STATE_WORKING, msg([textPart(`${pkt.signal}: ${text}`)])))]
    }
  }
}

const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED])

export function isTerminal (state: TaskState | undefined): boolean {
  return state !== undefined && TERMINAL.has(state)
}

/** A state at which an execution stops waiting (the caller speaks next, or it is over). */
export function endsTurn (state: TaskState | undefined): boolean {
  return isTerminal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED
}

/** The state an event sets, if any. */
export function stateOf (e: AgentExecutionEvent): TaskState | undefined {
  if (e.kind === 'statusUpdate') return e.data.status?.state
  if (e.kind === 'task') return e.data.status?.state
  return undefined
}
