import * as cbor from '@ipld/dag-cbor'
import { InvalidPacketError, PacketTooLargeError } from '../util/errors.js'
import { encodeCanonical } from './canonical.js'
import type { Packet } from './types.js'
import { validatePacket } from './validate.js'

/** Largest encoded packet accepted anywhere (documented in docs/PROTOCOL.md). */
export const MAX_PACKET_BYTES = 512 * 1024

function stripUndefined (p: Packet): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(p)) {
    if (v !== undefined) out[k] = v
  }
  return out
}

/** Deterministic DAG-CBOR encoding of a validated packet. */
export function encodePacket (packet: Packet): Uint8Array {
  const valid = validatePacket(stripUndefined(packet))
  const bytes = encodeCanonical(stripUndefined(valid))
  if (bytes.byteLength > MAX_PACKET_BYTES) {
    throw new PacketTooLargeError(`packet is ${bytes.byteLength} bytes; the limit is ${MAX_PACKET_BYTES}`)
  }
  return bytes
}

/** Decode and validate untrusted packet bytes. */
export function decodePacket (bytes: Uint8Array): Packet {
  if (bytes.byteLength > MAX_PACKET_BYTES) {
    throw new PacketTooLargeError(`packet is ${bytes.byteLength} bytes; the limit is ${MAX_PACKET_BYTES}`)
  }
  let value: unknown
  try {
    value = cbor.decode(bytes)
  } catch (err) {
    throw new InvalidPacketError('packet is not valid DAG-CBOR', { cause: err })
  }
  return validatePacket(value)
}
