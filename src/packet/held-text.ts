// A payload text held as its UTF-8 bytes from the control request to the
// packet: a large `send` text that came in a binary request frame is never
// decoded to a JS string on the send path, because the packet's canonical
// CBOR text IS those bytes (a 64 KiB string per packet was the sender's
// largest allocation in V8's young generation, and its decode and re-encode
// two passes over the payload). HeldText.of accepts only well-formed UTF-8,
// exactly what the frame's reference decode accepts (it refuses the rest).
//
// On a packet, a held text sits behind an accessor: reading payload.text
// gives the string (decoded once, on first read), so every reader of the
// packet sees what it saw before; assigning it replaces the held text by a
// plain value. Only the encoder (encode-fast.ts) and the payload rule
// (rules.ts) ask heldTextOf for the bytes and never read the string.
import { isAscii, isUtf8 } from 'node:buffer'

/** texts of at least this many bytes are held as bytes (smaller ones are cheaper as strings) */
export const HOLD_MIN_BYTES = 4096

/** the payload's own slot for its held text (not enumerable: copies and JSON see the plain text) */
const HELD = Symbol('amesh.heldText')

export class HeldText {
  private decoded: string | undefined

  /** `length`: the UTF-16 code units the bytes decode to (a string's length, which the size rules bound) */
  private constructor (readonly bytes: Uint8Array, readonly length: number) {}

  /** The held text of well-formed UTF-8 bytes (a view, not copied); undefined when they are not UTF-8. */
  static of (bytes: Uint8Array): HeldText | undefined {
    if (isAscii(bytes)) return new HeldText(bytes, bytes.byteLength)
    if (!isUtf8(bytes)) return undefined
    return new HeldText(bytes, utf16Units(bytes))
  }

  /** the text as a string (what the bytes decode to; decoded on the first call) */
  toString (): string {
    this.decoded ??= Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString('utf8')
    return this.decoded
  }

  /** whether the string was ever made (tests: the send path must not make it) */
  get wasDecoded (): boolean { return this.decoded !== undefined }

  /** the accessor a payload's `text` gets (identity marks it as this text's) */
  readonly read = (): string => this.toString()
}

/** How many UTF-16 code units well-formed UTF-8 decodes to: one per lead byte, two for a four-byte sequence. */
export function utf16Units (bytes: Uint8Array): number {
  let n = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if ((b & 0xc0) !== 0x80) n += b >= 0xf0 ? 2 : 1
  }
  return n
}

interface WithHeld { [HELD]?: HeldText, text?: string }

/** Set a payload's text: a string as it is, a held text behind the accessor (decoded if read). */
export function putText (payload: { text?: string }, text: string | HeldText): void {
  if (typeof text === 'string') { payload.text = text; return }
  Object.defineProperty(payload, HELD, { value: text, configurable: true, writable: true })
  Object.defineProperty(payload, 'text', {
    get: text.read,
    set (v: string | undefined) {
      delete (this as WithHeld)[HELD]
      Object.defineProperty(this, 'text', { value: v, writable: true, enumerable: true, configurable: true })
    },
    enumerable: true,
    configurable: true
  })
}

/** The payload's held text, when its `text` is still the held one's accessor; else undefined. */
export function heldTextOf (payload: object): HeldText | undefined {
  const held = (payload as WithHeld)[HELD]
  if (held === undefined) return undefined
  return Object.getOwnPropertyDescriptor(payload, 'text')?.get === held.read ? held : undefined
}

/** A text as a string (a held one decoded). */
export function textString (text: string | HeldText): string {
  return typeof text === 'string' ? text : text.toString()
}
