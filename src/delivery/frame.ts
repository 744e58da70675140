import * as cbor from '@ipld/dag-cbor'
import { MalformedFrameError } from '../util/errors.js'

export const PACKET_PROTOCOL = '/amesh/packet/1.0.0'
/** Largest frame accepted on the packet protocol. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024
/** Most packets in one frame. */
export const MAX_PACKETS_PER_FRAME = 1024

/** Per-packet answer: accepted with the inbox seq, or rejected with a code. */
export type AckResult =
  | { i: string, s: number }
  | { i: string, c: string, m: string, r?: boolean }

export type Frame =
  | { t: 'p', b: number, p: Uint8Array[] }
  | { t: 'a', b: number, r: AckResult[] }
  | { t: 'e', c: string, m: string }

type Obj = Record<string, unknown>

function bad (msg: string): never {
  throw new MalformedFrameError(`malformed frame: ${msg}`)
}

function isObj (v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)
}

function batchNo (v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) bad('batch number must be a non-negative integer')
  return v
}

function ackResult (v: unknown): AckResult {
  if (!isObj(v) || typeof v.i !== 'string') bad('ack result needs a packet id')
  if (typeof v.s === 'number' && Number.isSafeInteger(v.s)) return { i: v.i, s: v.s }
  if (typeof v.c === 'string' && typeof v.m === 'string') {
    return v.r === true ? { i: v.i, c: v.c, m: v.m, r: true } : { i: v.i, c: v.c, m: v.m }
  }
  return bad('ack result needs a seq or a code and reason')
}

function packetsFrame (o: Obj): Frame {
  const p = o.p
  if (!Array.isArray(p) || p.length === 0 || p.length > MAX_PACKETS_PER_FRAME) bad(`a packet frame carries 1..${MAX_PACKETS_PER_FRAME} packets`)
  if (!p.every((x) => x instanceof Uint8Array)) bad('packets must be byte strings')
  return { t: 'p', b: batchNo(o.b), p: p as Uint8Array[] }
}

function ackFrame (o: Obj): Frame {
  const r = o.r
  if (!Array.isArray(r) || r.length > MAX_PACKETS_PER_FRAME) bad('an ack frame carries a list of results')
  return { t: 'a', b: batchNo(o.b), r: r.map(ackResult) }
}

export function decodeFrame (bytes: Uint8Array): Frame {
  if (bytes.byteLength > MAX_FRAME_BYTES) bad(`frame of ${bytes.byteLength} bytes exceeds ${MAX_FRAME_BYTES}`)
  let v: unknown
  try {
    v = cbor.decode(bytes)
  } catch {
    bad('not DAG-CBOR')
  }
  if (!isObj(v)) bad('not a map')
  switch (v.t) {
    case 'p': return packetsFrame(v)
    case 'a': return ackFrame(v)
    case 'e':
      if (typeof v.c !== 'string' || typeof v.m !== 'string') bad('error frame needs code and reason')
      return { t: 'e', c: v.c, m: v.m }
    default: return bad(`unknown frame type ${String(v.t)}`)
  }
}

export function encodeFrame (frame: Frame): Uint8Array {
  return cbor.encode(frame)
}
