// Text a sender hands to `amesh send`: valid UTF-8 only (never silently
// turned into U+FFFD), and not empty unless asked for.
import { InvalidArgumentError } from '../../util/errors.js'

const REPLACEMENT = '\uFFFD'

/** TEXT from the command line: Node has already decoded argv, so bytes that were not UTF-8 show as U+FFFD. */
export function checkArgText (text: string, allowEmpty: boolean): string {
  if (text === '' && !allowEmpty) throw new InvalidArgumentError('TEXT is empty: nothing to send (pass --allow-empty to send an empty message)')
  if (text.includes(REPLACEMENT)) throw new InvalidArgumentError('TEXT is not valid UTF-8 (it holds U+FFFD, the mark of undecodable bytes): refused, nothing was sent')
  return text
}

function decodeChunk (decoder: TextDecoder, chunk: Uint8Array | string, line: number, stream: boolean): string {
  if (typeof chunk === 'string') return chunk
  try {
    return decoder.decode(chunk, { stream })
  } catch {
    throw new InvalidArgumentError(`stdin is not valid UTF-8 (at line ${line}): refused from there on; the lines before it were sent`)
  }
}

/** stdin split into lines (LF or CRLF), decoded strictly as UTF-8. */
export async function * strictLines (input: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let pending = ''
  let line = 1
  for await (const chunk of input) {
    pending += decodeChunk(decoder, chunk, line, true)
    let start = 0
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
      yield pending.slice(start, nl > start && pending[nl - 1] === '\r' ? nl - 1 : nl)
      line++
      start = nl + 1
    }
    pending = pending.slice(start)
  }
  pending += decodeChunk(decoder, new Uint8Array(0), line, false)
  if (pending !== '') yield pending
}
