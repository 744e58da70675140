// Text a sender hands to `amesh send`: valid UTF-8 only (never silently
// turned into U+FFFD), and not empty unless asked for.
import { InvalidArgumentError } from '../../util/errors.js'

const REPLACEMENT = '\uFFFD'
/** valid UTF-8 only, and a leading U+FEFF (BOM) is text like any other: sent byte for byte, never dropped */
const STRICT = { fatal: true, ignoreBOM: true }

/** TEXT from the command line: Node has already decoded argv, so bytes that were not UTF-8 show as U+FFFD. */
export function checkArgText (text: string, allowEmpty: boolean): string {
  if (text === '' && !allowEmpty) throw new InvalidArgumentError('TEXT is empty: nothing to send (pass --allow-empty to send an empty message)')
  if (text.includes(REPLACEMENT)) throw new InvalidArgumentError('TEXT is not valid UTF-8 (it holds U+FFFD, the mark of undecodable bytes): refused, nothing was sent')
  return text
}

function decodeLine (decoder: TextDecoder, bytes: Uint8Array, line: number): string {
  try {
    return decoder.decode(bytes)
  } catch {
    throw new InvalidArgumentError(`stdin is not valid UTF-8 (at line ${line}): refused from there on; the lines before it were sent`)
  }
}

function withoutCr (bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, bytes.length - 1) : bytes
}

/** stdin split into lines (LF or CRLF), each decoded strictly as UTF-8 (a line is split on bytes, so a bad line never spoils the ones before it). */
export async function * strictLines (input: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', STRICT)
  let pending: Buffer = Buffer.alloc(0)
  let line = 1
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    pending = pending.length === 0 ? bytes : Buffer.concat([pending, bytes])
    let start = 0
    for (let nl = pending.indexOf(0x0a); nl >= 0; nl = pending.indexOf(0x0a, start)) {
      yield decodeLine(decoder, withoutCr(pending.subarray(start, nl)), line++)
      start = nl + 1
    }
    pending = Buffer.from(pending.subarray(start))
  }
  if (pending.length > 0) yield decodeLine(decoder, withoutCr(pending), line)
}

/** A whole file or stream as one message text: strict UTF-8 (`what` names the source in the error). */
export function readAllText (bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder('utf-8', STRICT).decode(bytes)
  } catch {
    throw new InvalidArgumentError(`${what} is not valid UTF-8: refused, nothing was sent`)
  }
}
