import { decodeCbor } from '../util/cbor-decode.js'
import { InvalidPacketError, PacketTooLargeError } from '../util/errors.js'
import { CanonicalEncoder, encodeCanonical } from './canonical.js'
import { PacketDecoder, decodeCanonicalPacket } from './decode-fast.js'
import { writePacket } from './encode-fast.js'
import type { Packet } from './types.js'
import { validatePacket } from './validate.js'

/** Largest encoded packet accepted anywhere (documented in docs/PROTOCOL.md). */
export const MAX_PACKET_BYTES = 512 * 1024

function stripUndefined (p: Packet): Record<string, unknown> {
  const src = p as unknown as Record<string, unknown>
  const out: Record<string, unknown> = {}
  // Object.keys, not Object.entries: no [key, value] pair allocated per field (the send path runs this per packet)
  for (const k of Object.keys(src)) {
    const v = src[k]
    if (v !== undefined) out[k] = v
  }
  return out
}

/**
 * The packet codec with its caches (the encoder's scratch space, the
 * decoder's recently seen node ids): whoever encodes or decodes a stream of
 * packets owns one. encodePacket / decodePacket below are the same without
 * caches kept between calls.
 */
export class PacketCodec {
  private readonly encoder = new CanonicalEncoder()
  private readonly decoder = new PacketDecoder()

  /** Deterministic DAG-CBOR encoding of a validated packet. */
  encode (packet: Packet): Uint8Array {
    const direct = this.direct(0, packet)
    if (direct === undefined) return this.encodeReference(packet)
    checkSize(direct)
    return direct
  }

  /** encode through validatePacket and the canonical encoder: what encode gives, and the error it names (tests compare the two) */
  encodeReference (packet: Packet): Uint8Array {
    // validatePacket builds a new packet and sets only defined fields: it is encoded as it is
    const bytes = this.encoder.encode(validatePacket(stripUndefined(packet)))
    checkSize(bytes)
    return bytes
  }

  /**
   * As encode, with `room` free bytes before the packet in one new buffer
   * (a store value's header goes there, and the packet is not copied again):
   * `whole` is that buffer, `bytes` the packet in it. No `whole` when the
   * packet took dag-cbor's path; `bytes` is then what encode gives.
   */
  encodeAfter (room: number, packet: Packet): { bytes: Uint8Array, whole?: Uint8Array } {
    const whole = this.direct(room, packet)
    if (whole === undefined) return this.encodeAfterReference(room, packet)
    const bytes = whole.subarray(room)
    checkSize(bytes)
    return { bytes, whole }
  }

  /** encodeAfter through validatePacket and the canonical encoder (the reference of the one-pass path) */
  encodeAfterReference (room: number, packet: Packet): { bytes: Uint8Array, whole?: Uint8Array } {
    const valid = validatePacket(stripUndefined(packet))
    const whole = this.encoder.encodeAfter(room, valid)
    const bytes = whole === undefined ? this.encoder.encode(valid) : whole.subarray(room)
    checkSize(bytes)
    return { bytes, whole }
  }

  /** the one-pass encoding after `room` bytes, or undefined: then the reference decides */
  private direct (room: number, packet: Packet): Uint8Array | undefined {
    return this.encoder.encodeDirectAfter(room, writePacket, packet)
  }

  /** Decode and validate untrusted packet bytes (as decodePacket). */
  decode (bytes: Uint8Array): Packet {
    checkSize(bytes)
    return this.decoder.decode(bytes) ?? decodeViaDagCbor(bytes)
  }
}

/** Deterministic DAG-CBOR encoding of a validated packet. */
export function encodePacket (packet: Packet): Uint8Array {
  const bytes = encodeCanonical(validatePacket(stripUndefined(packet)))
  checkSize(bytes)
  return bytes
}

/**
 * Decode and validate untrusted packet bytes. Canonical packet bytes (what
 * encodePacket writes) take the direct decoder; anything else takes the
 * dag-cbor path, which decides and names the error. Both give the same packet.
 */
export function decodePacket (bytes: Uint8Array): Packet {
  checkSize(bytes)
  return decodeCanonicalPacket(bytes) ?? decodeViaDagCbor(bytes)
}

/** The reference decoder: dag-cbor strict decode, then validatePacket. */
export function decodePacketViaDagCbor (bytes: Uint8Array): Packet {
  checkSize(bytes)
  return decodeViaDagCbor(bytes)
}

function checkSize (bytes: Uint8Array): void {
  if (bytes.byteLength > MAX_PACKET_BYTES) {
    throw new PacketTooLargeError(`packet is ${bytes.byteLength} bytes; the limit is ${MAX_PACKET_BYTES}`)
  }
}

function decodeViaDagCbor (bytes: Uint8Array): Packet {
  let value: unknown
  try {
    value = decodeCbor(bytes)
  } catch (err) {
    throw new InvalidPacketError('packet is not valid DAG-CBOR', { cause: err })
  }
  return validatePacket(value)
}
