// The send path's packet encode in one pass: each field of a packet is checked
// as validatePacket checks it and written as the canonical encoder writes the
// validated packet, with the top-level, scope, payload and proof keys in their
// canonical order taken from the field table (fields.ts), so there is no
// stripped copy, no validated copy and no key sort per map. It only writes
// what it is sure of: a packet the reference (validatePacket(stripUndefined(p))
// then the canonical encoder, codec.ts) would refuse, or one outside the
// shapes handled here (a prototype other than Object's, a lone surrogate, a
// float in a JSON value, …), makes writePacket answer false, and the caller
// takes the reference, which gives the bytes or names the error.
// test/packet/encode-fast.test.ts checks byte equality and that it refuses
// everything the reference refuses.
import { isNodeId } from '../identity/node-key.js'
import { isUlid } from '../util/ulid.js'
import { keyOrder, writeValue, type Writer } from './canonical.js'
import { FIELDS, MAX_FILES, MAX_ID_FIELD, MAX_LIST_STRING, MAX_PROOF_ITEMS, MAX_TEXT_FIELD, PACKET_KEYS, PAYLOAD_FIELDS, SIGNALS, ZONES, type FieldSpec } from './fields.js'
import { jsonValueField, optionsProblem } from './json-value.js'
import { signalPayloadProblem } from './rules.js'
import type { Signal } from './types.js'

type Obj = Record<string, unknown>
/** writes a defined field's value (its key is written before it); false: not sure, take the reference */
type FieldWriter = (w: Writer, v: unknown, o: Obj) => boolean

const isEnumerableOwn = Object.prototype.propertyIsEnumerable

/** A key as CBOR: its text head and its ASCII bytes (every key of a packet is ASCII and shorter than 24). */
function keyBytes (key: string): Uint8Array {
  const out = new Uint8Array(key.length + 1)
  out[0] = 0x60 | key.length
  for (let i = 0; i < key.length; i++) out[i + 1] = key.charCodeAt(i)
  return out
}

/** keys in canonical order with their bytes */
function ordered<T> (entries: ReadonlyArray<[string, T]>): ReadonlyArray<{ key: string, bytes: Uint8Array, value: T }> {
  return [...entries].sort((a, b) => keyOrder(a[0], b[0])).map(([key, value]) => ({ key, bytes: keyBytes(key), value }))
}

function plain (v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype
}

/** what validate.ts's str() accepts */
function isIdString (v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_ID_FIELD
}

function text (w: Writer, v: unknown): boolean {
  if (typeof v !== 'string') return false
  w.text(v)
  return true
}

function idText (w: Writer, v: unknown): boolean {
  return isIdString(v) && text(w, v)
}

function nodeIdText (w: Writer, v: unknown): boolean {
  return isIdString(v) && isNodeId(v) && text(w, v)
}

function enumText (values: readonly string[]): FieldWriter {
  return (w, v) => typeof v === 'string' && values.includes(v) && text(w, v)
}

function bool (w: Writer, v: unknown): boolean {
  if (typeof v !== 'boolean') return false
  w.room(1)
  w.buf[w.pos++] = v ? 0xf5 : 0xf4
  return true
}

function optionalWriter (spec: FieldSpec): FieldWriter {
  switch (spec.kind) {
    case 'string': return idText
    case 'nodeId': return nodeIdText
    case 'enum': return enumText(spec.values)
    case 'bool': return bool
  }
}

const ZONE_KEY = keyBytes('zone')
const FILES_KEY = keyBytes('files')

/** scope as validate.ts's scopeField makes it: {files: [], zone: 'project'} when absent, unknown keys dropped */
function scope (w: Writer, v: unknown): boolean {
  if (v !== undefined && !plain(v)) return false
  const o = v as Obj | undefined
  const files = o?.files ?? []
  const zone = o?.zone ?? 'project'
  if (!Array.isArray(files) || files.length > MAX_FILES || typeof zone !== 'string' || !(ZONES as readonly string[]).includes(zone)) return false
  w.head(5, 2)
  w.raw(ZONE_KEY)
  w.text(zone)
  w.raw(FILES_KEY)
  w.head(4, files.length)
  for (let i = 0; i < files.length; i++) {
    const f: unknown = files[i]
    if (typeof f !== 'string' || f.length > MAX_LIST_STRING) return false
    w.text(f)
  }
  return true
}

/** one payload field's check as validate.ts's payloadField makes it, then its value */
const PAYLOAD_WRITERS: Record<string, FieldWriter> = {
  text: (w, v) => typeof v === 'string' && v.length <= MAX_TEXT_FIELD && text(w, v),
  options: (w, v) => { if (optionsProblem(v) !== undefined) return false; writeValue(w, v); return true },
  context: (w, v) => { writeValue(w, jsonValueField(v, 'packet.payload.context')); return true },
  decision: (w, v) => { writeValue(w, jsonValueField(v, 'packet.payload.decision')); return true },
  result: (w, v) => { writeValue(w, jsonValueField(v, 'packet.payload.result')); return true }
}
const PAYLOAD_ORDER = ordered(PAYLOAD_FIELDS.map((f) => [f, PAYLOAD_WRITERS[f]]))

function payload (w: Writer, v: unknown, o: Obj): boolean {
  if (!plain(v)) return false
  let n = 0
  for (const k in v) {
    if (!Object.hasOwn(v, k) || !Object.hasOwn(PAYLOAD_WRITERS, k)) return false
    if (v[k] !== undefined) n++
  }
  const signal = o.signal
  if (typeof signal !== 'string' || !(SIGNALS as readonly string[]).includes(signal) || signalPayloadProblem(signal as Signal, v) !== undefined) return false
  w.head(5, n)
  for (const f of PAYLOAD_ORDER) {
    const x = v[f.key]
    if (x === undefined) continue
    w.raw(f.bytes)
    if (!f.value(w, x, v)) return false
  }
  return true
}

/** proof.lineage / proof.grants as validate.ts's bytesList takes them */
function bytesList (w: Writer, v: unknown): boolean {
  if (!Array.isArray(v) || v.length > MAX_PROOF_ITEMS) return false
  w.head(4, v.length)
  for (let i = 0; i < v.length; i++) {
    const b: unknown = v[i]
    if (!(b instanceof Uint8Array)) return false
    w.bytes(b)
  }
  return true
}

const GRANTS_KEY = keyBytes('grants')
const LINEAGE_KEY = keyBytes('lineage')

function proof (w: Writer, v: unknown): boolean {
  if (!plain(v)) return false
  const { grants, lineage } = v
  w.head(5, (grants === undefined ? 0 : 1) + (lineage === undefined ? 0 : 1))
  if (grants !== undefined) { w.raw(GRANTS_KEY); if (!bytesList(w, grants)) return false }
  if (lineage !== undefined) { w.raw(LINEAGE_KEY); if (!bytesList(w, lineage)) return false }
  return true
}

/** Each top-level key a packet may have, with its writer: the envelope's and the proof's by hand, the rest from FIELDS. */
const TOP_WRITERS: Record<string, FieldWriter> = {
  id: (w, v) => isIdString(v) && isUlid(v) && text(w, v),
  from: nodeIdText,
  to: nodeIdText,
  signal: enumText(SIGNALS),
  scope,
  payload,
  ts: (w, v) => { if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return false; w.head(0, v); return true },
  ...Object.fromEntries(Object.entries(FIELDS).map(([k, spec]) => [k, optionalWriter(spec)])),
  proof
}
const TOP_ORDER = ordered(PACKET_KEYS.map((k) => [k, TOP_WRITERS[k]]))
/** the envelope keys without which the reference refuses a packet (an absent scope is filled in instead) */
const REQUIRED = new Set(['id', 'from', 'to', 'signal', 'payload', 'ts'])

/**
 * Write the canonical encoding of `packet` as validated: the bytes of
 * encodeCanonical(validatePacket(stripUndefined(packet))). False when it is
 * not sure (then nothing it wrote counts): the reference decides.
 */
export function writePacket (w: Writer, packet: unknown): boolean {
  if (!plain(packet)) return false
  // the map head: fewer than 24 keys, one byte, filled in at the end
  w.room(1)
  const head = w.pos++
  let n = 0
  for (const f of TOP_ORDER) {
    const key = f.key
    // what stripUndefined copies: own enumerable keys with a defined value
    const v = packet[key] !== undefined && isEnumerableOwn.call(packet, key) ? packet[key] : undefined
    if (v === undefined && key !== 'scope') {
      if (REQUIRED.has(key)) return false
      continue
    }
    w.raw(f.bytes)
    if (!f.value(w, v, packet)) return false
    n++
  }
  w.buf[head] = 0xa0 | n
  return true
}
