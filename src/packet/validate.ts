import { isNodeId } from '../identity/node-key.js'
import { InvalidPacketError, UnknownSignalError } from '../util/errors.js'
import { isUlid } from '../util/ulid.js'
import { checkSignalPayload } from './rules.js'
import { FIELDS, FIELD_NAMES, MAX_FILES, MAX_ID_FIELD, MAX_LIST_STRING, MAX_OPTIONS, MAX_PROOF_ITEMS, MAX_TEXT_FIELD, PAYLOAD_FIELDS, SIGNALS, ZONES } from './fields.js'
import type { FieldSpec } from './fields.js'
import { checkText, jsonValueField, optionsProblem } from './json-value.js'
import type { OptionValue, Packet, Payload, Proof, Scope, Signal, Zone } from './types.js'

export { MAX_FILES, MAX_ID_FIELD, MAX_LIST_STRING, MAX_OPTIONS, MAX_PROOF_ITEMS, MAX_TEXT_FIELD }

type Obj = Record<string, unknown>

function isObj (v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)
}

function str (o: Obj, key: string, max = MAX_ID_FIELD): string {
  const v = o[key]
  if (typeof v !== 'string' || v.length === 0 || v.length > max) {
    throw new InvalidPacketError(`packet.${key} must be a non-empty string of at most ${max} characters`)
  }
  checkText(v, `packet.${key}`)
  return v
}

function nodeIdField (o: Obj, key: string): string {
  const v = str(o, key)
  if (!isNodeId(v)) throw new InvalidPacketError(`packet.${key} is not a node id: ${v}`)
  return v
}

function signalField (v: unknown): Signal {
  if (typeof v !== 'string' || !(SIGNALS as readonly string[]).includes(v)) {
    throw new UnknownSignalError(`unknown signal: ${String(v)} (known: ${SIGNALS.join(', ')})`)
  }
  return v as Signal
}

function scopeField (v: unknown): Scope {
  if (v === undefined) return { files: [], zone: 'project' }
  if (!isObj(v)) throw new InvalidPacketError('packet.scope must be an object')
  const files = v.files ?? []
  if (!Array.isArray(files) || files.length > MAX_FILES || !files.every((f) => typeof f === 'string' && f.length <= MAX_LIST_STRING)) {
    throw new InvalidPacketError(`packet.scope.files must be at most ${MAX_FILES} strings`)
  }
  for (const f of files as string[]) checkText(f, 'packet.scope.files entry')
  const zone = v.zone ?? 'project'
  if (typeof zone !== 'string' || !(ZONES as readonly string[]).includes(zone)) {
    throw new InvalidPacketError(`packet.scope.zone must be one of ${ZONES.join(', ')}`)
  }
  return { files: files as string[], zone: zone as Zone }
}

function payloadField (v: unknown): Payload {
  if (!isObj(v)) throw new InvalidPacketError('packet.payload must be an object')
  const out: Payload = {}
  for (const [key, value] of Object.entries(v)) {
    if (value === undefined) continue
    if (!(PAYLOAD_FIELDS as readonly string[]).includes(key)) {
      throw new InvalidPacketError(`packet.payload.${key} is not a payload field (known: ${PAYLOAD_FIELDS.join(', ')})`)
    }
    if (key === 'options') {
      const problem = optionsProblem(value)
      if (problem !== undefined) throw new InvalidPacketError(`packet.payload.options: ${problem}`)
      out.options = value as OptionValue[]
    } else if (key === 'text') {
      if (typeof value !== 'string' || value.length > MAX_TEXT_FIELD) {
        throw new InvalidPacketError(`packet.payload.text must be a string of at most ${MAX_TEXT_FIELD} characters`)
      }
      checkText(value, 'packet.payload.text')
      out.text = value
    } else {
      out[key as 'context' | 'decision' | 'result'] = jsonValueField(value, `packet.payload.${key}`)
    }
  }
  return out
}

function bytesList (v: unknown, name: string): Uint8Array[] | undefined {
  if (v === undefined) return undefined
  if (!Array.isArray(v) || v.length > MAX_PROOF_ITEMS || !v.every((x) => x instanceof Uint8Array)) {
    throw new InvalidPacketError(`packet.proof.${name} must be at most ${MAX_PROOF_ITEMS} byte strings`)
  }
  return v as Uint8Array[]
}

function proofField (v: unknown): Proof | undefined {
  if (v === undefined) return undefined
  if (!isObj(v)) throw new InvalidPacketError('packet.proof must be an object')
  const proof: Proof = {}
  const lineage = bytesList(v.lineage, 'lineage')
  const grants = bytesList(v.grants, 'grants')
  if (lineage !== undefined) proof.lineage = lineage
  if (grants !== undefined) proof.grants = grants
  return proof
}

function enumField (v: unknown, key: string, values: readonly string[]): string | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'string' || !values.includes(v)) {
    throw new InvalidPacketError(`packet.${key} must be one of ${values.join(', ')}`)
  }
  return v
}

function optBool (o: Obj, key: string): boolean | undefined {
  const v = o[key]
  if (v === undefined) return undefined
  if (typeof v !== 'boolean') throw new InvalidPacketError(`packet.${key} must be a boolean`)
  return v
}

function envelope (o: Obj): Packet {
  const id = str(o, 'id')
  if (!isUlid(id)) throw new InvalidPacketError(`packet.id must be a ULID: ${id}`)
  const ts = o.ts
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts) || ts < 0) throw new InvalidPacketError('packet.ts must be a non-negative integer (ms)')
  const signal = signalField(o.signal)
  const payload = payloadField(o.payload)
  checkSignalPayload(signal, payload)
  return { id, from: nodeIdField(o, 'from'), to: nodeIdField(o, 'to'), signal, scope: scopeField(o.scope), payload, ts }
}

/** Set `key` on the packet when `v` is defined (the optional fields are set in a fixed order). */
function put (p: Packet, key: string, v: unknown): void {
  if (v !== undefined) (p as unknown as Obj)[key] = v
}

/** One optional field of fields.ts, checked by its kind (undefined when absent). */
function optionalField (o: Obj, key: string, spec: FieldSpec): unknown {
  if (o[key] === undefined) return undefined
  switch (spec.kind) {
    case 'string': return str(o, key)
    case 'nodeId': return nodeIdField(o, key)
    case 'enum': return enumField(o[key], key, spec.values)
    case 'bool': return optBool(o, key)
  }
}

/** Validate an untrusted value as a packet: shape, bounds, signal/payload rule. */
export function validatePacket (value: unknown): Packet {
  if (!isObj(value)) throw new InvalidPacketError('packet must be an object')
  const p = envelope(value)
  for (const key of FIELD_NAMES) put(p, key, optionalField(value, key, FIELDS[key]))
  put(p, 'proof', proofField(value.proof))
  return p
}
