// JSON values in packet payloads (context, decision, result) and the options
// list (strings or {id, label, description?}). A value is what JSON can say:
// a string, a finite number, true/false, null, an array, a plain object. It
// travels as DAG-CBOR (maps with keys sorted, so the encoding stays
// deterministic), nested at most MAX_JSON_DEPTH containers deep.
import { InvalidPacketError, PayloadTooDeepError } from '../util/errors.js'
import { isWellFormedText } from '../util/unicode.js'
import { MAX_ID_FIELD, MAX_JSON_DEPTH, MAX_LIST_STRING, MAX_OPTIONS, MAX_TEXT_FIELD } from './fields.js'

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** One choice of an ESCALATE: a plain label, or an id with its label (and a description). */
export type OptionValue = string | { id: string, label: string, description?: string }

/**
 * Why `s` is not text, or undefined: a lone surrogate (half of a UTF-16 pair)
 * has no UTF-8 form, and DAG-CBOR would store U+FFFD in its place: a packet
 * string holding one is refused, never silently changed.
 */
export function textProblem (s: string): string | undefined {
  if (isWellFormedText(s)) return undefined
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0xd800 || c > 0xdfff) continue
    const next = s.charCodeAt(i + 1)
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) { i++; continue }
    return `holds a lone surrogate (U+${c.toString(16).toUpperCase()}) at index ${i}: not valid Unicode text`
  }
  return undefined
}

/** Throw InvalidPacketError when `s` (at `path`) is not valid Unicode text. */
export function checkText (s: string, path: string): void {
  const problem = textProblem(s)
  if (problem !== undefined) throw new InvalidPacketError(`${path} ${problem}`)
}

function isPlain (v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** Check `v` (found at `path`, inside `depth` containers) as a JSON value: throws PayloadTooDeepError or InvalidPacketError. */
function check (v: unknown, path: string, depth: number): void {
  switch (typeof v) {
    case 'string':
      if (v.length > MAX_TEXT_FIELD) throw new InvalidPacketError(`${path} is a string longer than ${MAX_TEXT_FIELD} characters`)
      checkText(v, path)
      return
    case 'number':
      if (!Number.isFinite(v)) throw new InvalidPacketError(`${path} is not a finite number`)
      return
    case 'boolean': return
    case 'object': break
    default: throw new InvalidPacketError(`${path} is not a JSON value (${typeof v})`)
  }
  if (v === null) return
  if (depth >= MAX_JSON_DEPTH) throw new PayloadTooDeepError(`${path} nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`)
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) check(v[i], path, depth + 1)
    return
  }
  if (!isPlain(v)) throw new InvalidPacketError(`${path} is not a JSON value (a byte string, link or other object)`)
  for (const k of Object.keys(v)) {
    checkText(k, `${path} key`)
    check(v[k], path, depth + 1)
  }
}

/** Validate `v` as a JSON value at `path` (e.g. packet.payload.context); returns it. */
export function jsonValueField (v: unknown, path: string): JsonValue {
  check(v, path, 0)
  return v as JsonValue
}

/** Whether `v` is a JSON value within the depth bound (no error). */
export function isJsonValue (v: unknown): boolean {
  try { check(v, '', 0); return true } catch { return false }
}

const OPTION_KEYS = new Set(['id', 'label', 'description'])

function optionProblem (o: unknown): string | undefined {
  if (typeof o === 'string') return o.length <= MAX_LIST_STRING ? optionTextProblem(o) : `an option is longer than ${MAX_LIST_STRING} characters`
  if (!isPlain(o)) return 'an option is neither a string nor {id, label, description?}'
  for (const k of Object.keys(o)) if (!OPTION_KEYS.has(k)) return `an option has the unknown key ${k} (known: id, label, description)`
  const { id, label, description } = o
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_FIELD) return `an option's id must be a string of 1..${MAX_ID_FIELD} characters`
  if (typeof label !== 'string' || label.length > MAX_LIST_STRING) return `an option's label must be a string of at most ${MAX_LIST_STRING} characters`
  if (description !== undefined && (typeof description !== 'string' || description.length > MAX_LIST_STRING)) return `an option's description must be a string of at most ${MAX_LIST_STRING} characters`
  return optionTextProblem(id) ?? optionTextProblem(label) ?? (description === undefined ? undefined : optionTextProblem(description))
}

function optionTextProblem (s: string): string | undefined {
  const problem = textProblem(s)
  return problem === undefined ? undefined : `an option ${problem}`
}

/** What is wrong with `v` as payload.options, or undefined when it is 1..MAX_OPTIONS options. */
export function optionsProblem (v: unknown): string | undefined {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_OPTIONS) return `must be 1..${MAX_OPTIONS} options`
  for (const o of v) {
    const p = optionProblem(o)
    if (p !== undefined) return p
  }
  return undefined
}

/** An option as one line of text: its label (with its id when it has one). */
export function optionText (o: OptionValue): string {
  return typeof o === 'string' ? o : `${o.label} [${o.id}]${o.description === undefined ? '' : ` (${o.description})`}`
}

/** A payload value as the channel shows it: a string as it is, anything else as compact JSON. */
export function valueText (v: JsonValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v)
}

/** A payload value when it is a string (the text-only readers: verdicts, cancels), else undefined. */
export function stringOf (v: JsonValue | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined
}
