import { SignalPayloadError } from '../util/errors.js'
import type { PayloadField, Payload, Signal } from './types.js'

interface SignalRule {
  allowed: readonly PayloadField[]
  /** every one of these must be present */
  required: readonly PayloadField[]
  /** at least one of these must be present */
  oneOf?: readonly PayloadField[]
}

/**
 * ADR-026: a signal fills only its allowed subset of the payload.
 * Enforced on encode (sender) and on decode (receiver).
 */
export const SIGNAL_RULES: Readonly<Record<Signal, SignalRule>> = {
  SPAWN: { allowed: ['context', 'text'], required: ['context'] },
  RETURN: { allowed: ['result'], required: ['result'] },
  BLOCKED_ON: { allowed: ['context'], required: ['context'] },
  CHECKPOINT: { allowed: ['context'], required: ['context'] },
  HANDOFF: { allowed: ['context', 'decision'], required: ['context', 'decision'] },
  ESCALATE: { allowed: ['options', 'text'], required: ['options'] },
  ERROR: { allowed: ['context'], required: ['context'] },
  MESSAGE: { allowed: ['text', 'context'], required: [], oneOf: ['text', 'context'] }
}

/**
 * The payload field a bare TEXT fills for each signal (the CLI's `send TEXT`,
 * the MCP tools' `text`): the signal's main field. HANDOFF's decision and
 * ESCALATE's options come from their own arguments.
 */
export const TEXT_FIELD: Readonly<Record<Signal, PayloadField>> = {
  SPAWN: 'context',
  RETURN: 'result',
  BLOCKED_ON: 'context',
  CHECKPOINT: 'context',
  HANDOFF: 'context',
  ESCALATE: 'text',
  ERROR: 'context',
  MESSAGE: 'text'
}

function present (payload: Payload, field: PayloadField): boolean {
  return payload[field] !== undefined
}

/** What breaks the signal's payload rule (the SignalPayloadError message), or undefined when it holds. */
export function signalPayloadProblem (signal: Signal, payload: Payload): string | undefined {
  const rule = SIGNAL_RULES[signal]
  for (const field of Object.keys(payload) as PayloadField[]) {
    if (present(payload, field) && !rule.allowed.includes(field)) {
      return `${signal} may not carry payload.${field} (allowed: ${rule.allowed.join(', ')})`
    }
  }
  for (const field of rule.required) {
    if (!present(payload, field)) return `${signal} requires payload.${field}`
  }
  if (rule.oneOf !== undefined && !rule.oneOf.some((f) => present(payload, f))) {
    return `${signal} requires one of payload.${rule.oneOf.join(' / payload.')}`
  }
  return undefined
}

/** Throws SignalPayloadError naming the offending field. */
export function checkSignalPayload (signal: Signal, payload: Payload): void {
  const problem = signalPayloadProblem(signal, payload)
  if (problem !== undefined) throw new SignalPayloadError(problem)
}
