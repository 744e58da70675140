// The parameters of the `send` control method: the zod schema (the reference,
// and the wording of every error) and a hand-written check for the hot path.
// The packet fields among them (conversation_id, priority, …) come from the
// field table, src/packet/fields.ts (those with `send: true`).
import { z } from 'zod'
import { FIELDS, MAX_ID_FIELD, SEND_FIELDS, type FieldSpec, type FieldValues, type SendFieldName } from '../packet/fields.js'
import { PAYLOAD_FIELDS, ZONES, type JsonValue, type Payload } from '../packet/types.js'

const name = z.string().min(1).max(256)

/** An ESCALATE option: a string, or {id, label, description?} */
const optionObject = z.object({ id: z.string(), label: z.string(), description: z.string().optional() }).strict()
const optionSchema = z.unknown().superRefine((v, ctx) => {
  // an object is checked as {id, label, description?}, anything else as a string (so the error says what was expected)
  const r = (isPlainObject(v) ? optionObject : z.string()).safeParse(v)
  if (!r.success) for (const issue of r.error.issues) ctx.addIssue(issue as z.IssueData)
})
/**
 * text is a string; context, decision and result any JSON value (their
 * depth and size are checked as the packet is built: PAYLOAD_TOO_DEEP,
 * PACKET_TOO_LARGE); options strings or {id, label, description?}.
 */
function payloadFieldSchema (f: typeof PAYLOAD_FIELDS[number]): z.ZodTypeAny {
  if (f === 'text') return z.string().optional()
  if (f === 'options') return z.array(optionSchema).optional()
  return z.custom<JsonValue>((v) => v !== undefined, { message: 'a JSON value' }).optional()
}
const payloadSchema = z.object(Object.fromEntries(PAYLOAD_FIELDS.map((f) => [f, payloadFieldSchema(f)]))).strict() as unknown as z.ZodType<Payload, z.ZodTypeDef, Payload>

/** The zod type of a packet field as a `send` parameter (a node id is any string here: it is checked as the packet is built). */
function fieldSchema (spec: FieldSpec): z.ZodTypeAny {
  switch (spec.kind) {
    case 'string': return z.string().min(1).max(MAX_ID_FIELD)
    case 'nodeId': return z.string()
    case 'enum': return z.enum(spec.values as [string, ...string[]])
    case 'bool': return z.boolean()
  }
}

type PacketFieldShape = { [K in SendFieldName]: z.ZodType<FieldValues[K] | undefined> }
const packetFields = Object.fromEntries(SEND_FIELDS.map((k) => [k, fieldSchema(FIELDS[k]).optional()])) as unknown as PacketFieldShape

/** `to` naming a broadcast to a group (docs/PROTOCOL.md): a node called "broadcast" is reached by its id */
export const BROADCAST_TO = 'broadcast'

export const sendSchema = z.object({
  as: name,
  /** a node name or id, or "broadcast" (then `group` names the group's head; default: the sender's own group) */
  to: name,
  group: name.optional(),
  text: z.string().optional(),
  signal: z.string().optional(),
  payload: payloadSchema.optional(),
  ...packetFields,
  zone: z.enum(ZONES).optional(),
  files: z.array(z.string()).optional(),
  ttl_ms: z.number().int().positive().optional()
}).strict()

export type SendParams = z.infer<typeof sendSchema>

type Check = (v: unknown) => boolean

const isString: Check = (v) => typeof v === 'string'
const isName: Check = (v) => typeof v === 'string' && v.length >= 1 && v.length <= 256
const isStrings: Check = (v) => Array.isArray(v) && v.every(isString)
const oneOf = (values: readonly string[]): Check => (v) => typeof v === 'string' && values.includes(v)

/** What fieldSchema accepts, as a check. */
function fieldCheck (spec: FieldSpec): Check {
  switch (spec.kind) {
    case 'string': return (v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_ID_FIELD
    case 'nodeId': return isString
    case 'enum': return oneOf(spec.values)
    case 'bool': return (v) => typeof v === 'boolean'
  }
}

/** Each field of sendSchema, in its order, with what it accepts (besides absence, for all but as/to). */
const CHECKS: ReadonlyArray<[keyof SendParams, Check]> = [
  ['as', isName], ['to', isName], ['group', isName], ['text', isString], ['signal', isString], ['payload', isPayload],
  ...SEND_FIELDS.map((k): [keyof SendParams, Check] => [k, fieldCheck(FIELDS[k])]),
  ['zone', oneOf(ZONES)], ['files', isStrings], ['ttl_ms', (v) => typeof v === 'number' && Number.isInteger(v) && v > 0]
]
const SEND_KEYS = new Set<string>(CHECKS.map(([k]) => k))
const PAYLOAD_KEYS = new Set<string>(PAYLOAD_FIELDS)

function isPlainObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype
}

function onlyKeys (o: Record<string, unknown>, known: Set<string>): boolean {
  for (const k in o) if (!known.has(k)) return false
  return true
}

const OPTION_KEYS = new Set(['id', 'label', 'description'])

function isOption (o: unknown): boolean {
  if (typeof o === 'string') return true
  if (!isPlainObject(o) || !onlyKeys(o, OPTION_KEYS)) return false
  return isString(o.id) && isString(o.label) && (o.description === undefined || isString(o.description))
}

function isPayload (v: unknown): boolean {
  if (!isPlainObject(v) || !onlyKeys(v, PAYLOAD_KEYS)) return false
  for (const f of PAYLOAD_FIELDS) {
    const x = v[f]
    if (x === undefined) continue
    if (f === 'text' ? !isString(x) : f === 'options' ? !(Array.isArray(x) && x.every(isOption)) : false) return false
  }
  return true
}

/** The payload as zod returns it: its fields in PAYLOAD_FIELDS order, absent ones left out. */
function payloadOf (v: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of PAYLOAD_FIELDS) if (v[f] !== undefined) out[f] = v[f]
  return out
}

/**
 * The `send` parameters when they are certainly valid, else undefined (then
 * sendSchema decides, and words the error). What it returns is what
 * sendSchema.parse returns for the same input: the same fields, in the same
 * order. It accepts nothing sendSchema refuses (tested on many inputs).
 */
export function checkSendParams (raw: unknown): SendParams | undefined {
  if (!isPlainObject(raw) || !onlyKeys(raw, SEND_KEYS)) return undefined
  const out: Record<string, unknown> = {}
  for (const [key, ok] of CHECKS) {
    const v = raw[key]
    if (v === undefined) {
      if (key === 'as' || key === 'to') return undefined
      continue
    }
    if (!ok(v)) return undefined
    out[key] = key === 'payload' ? payloadOf(v as Record<string, unknown>) : v
  }
  return out as SendParams
}
