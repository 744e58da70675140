// RFC 8785 JSON Canonicalization Scheme (JCS) for the JSON values amesh signs
// (AgentCards, name claims). Objects: members sorted by the UTF-16 code units
// of their names; strings: ECMAScript JSON.stringify escaping; numbers: the
// ECMAScript shortest round-trip form (-0 is written as 0); no whitespace.
// Anything that is not plain JSON data (undefined, NaN, Infinity, bigint,
// functions, symbols, Dates, Maps, typed arrays, lone surrogates) is rejected
// with a CanonicalJsonError instead of being silently dropped or coerced.

import { AmeshError } from '../util/errors.js'

export type JsonPrimitive = null | boolean | number | string
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject
export interface JsonObject { [key: string]: JsonValue }

/** Nesting bound: cards are shallow, hostile input may not be. */
export const MAX_CANONICAL_DEPTH = 32

export class CanonicalJsonError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) {
    super('CANONICAL_JSON', message, options)
    this.name = 'CanonicalJsonError'
  }
}

const LONE_SURROGATE = /\p{Cs}/u

/** The RFC 8785 canonical text of a JSON value. */
export function canonicalize (value: unknown): string {
  return serialize(value, 0, '$')
}

/** The UTF-8 bytes of the canonical text. */
export function canonicalBytes (value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalize(value))
}

function serialize (value: unknown, depth: number, path: string): string {
  if (depth > MAX_CANONICAL_DEPTH) throw new CanonicalJsonError(`nesting deeper than ${MAX_CANONICAL_DEPTH} at ${path}`)
  if (value === null) return 'null'
  switch (typeof value) {
    case 'boolean': return value ? 'true' : 'false'
    case 'number': return serializeNumber(value, path)
    case 'string': return serializeString(value, path)
    case 'object': return Array.isArray(value)
      ? serializeArray(value, depth, path)
      : serializeObject(value, depth, path)
    default: throw new CanonicalJsonError(`${typeof value} is not a JSON value at ${path}`)
  }
}

function serializeNumber (value: number, path: string): string {
  if (!Number.isFinite(value)) throw new CanonicalJsonError(`${String(value)} is not a JSON number at ${path}`)
  // ECMAScript Number::toString is the RFC 8785 number form; -0 becomes "0".
  return Object.is(value, -0) ? '0' : String(value)
}

function serializeString (value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) throw new CanonicalJsonError(`lone surrogate in string at ${path}`)
  return JSON.stringify(value)
}

function serializeArray (value: unknown[], depth: number, path: string): string {
  const parts: string[] = []
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw new CanonicalJsonError(`sparse array at ${path}[${i}]`)
    parts.push(serialize(value[i], depth + 1, `${path}[${i}]`))
  }
  return '[' + parts.join(',') + ']'
}

function serializeObject (value: object, depth: number, path: string): string {
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) {
    throw new CanonicalJsonError(`not a plain object at ${path}`)
  }
  const record = value as Record<string, unknown>
  // Default sort compares UTF-16 code units, which is what RFC 8785 asks for.
  const keys = Object.keys(record).sort()
  const parts = keys.map((key) => {
    const member = serialize(record[key], depth + 1, `${path}.${key}`)
    return serializeString(key, path) + ':' + member
  })
  return '{' + parts.join(',') + '}'
}
