// JSON text of UTF-8 bytes, written the way JSON.stringify writes the string
// they decode to (used by the byte renderer, render-json.ts).
import type { JsonBytes } from '../util/json-bytes.js'

export const QUOTE = 0x22
export const BACKSLASH = 0x5c
const SHORT_ESCAPES: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' }
/** bytes of text: copied as they are, escaped by JSON.stringify, or the lead of a multi-byte sequence */
const PLAIN = 0
const ESCAPE = 1
const MULTI = 2
const TEXT_CLASS = Uint8Array.from({ length: 256 }, (_, ch) => ch >= 0x80 ? MULTI : ch < 0x20 || ch === QUOTE || ch === BACKSLASH ? ESCAPE : PLAIN)

/** Length of the well-formed UTF-8 sequence at i (Unicode table 3-7), 0 if ill-formed. */
function utf8Length (b: Uint8Array, i: number, end: number): number {
  const b0 = b[i]
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(b, i + 1, end, 0x80, 0xbf) ? 2 : 0
  let lo = 0x80
  let hi = 0xbf
  if (b0 >= 0xe0 && b0 <= 0xef) {
    if (b0 === 0xe0) lo = 0xa0
    if (b0 === 0xed) hi = 0x9f
    return cont(b, i + 1, end, lo, hi) && cont(b, i + 2, end, 0x80, 0xbf) ? 3 : 0
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    if (b0 === 0xf0) lo = 0x90
    if (b0 === 0xf4) hi = 0x8f
    return cont(b, i + 1, end, lo, hi) && cont(b, i + 2, end, 0x80, 0xbf) && cont(b, i + 3, end, 0x80, 0xbf) ? 4 : 0
  }
  return 0
}

function cont (b: Uint8Array, i: number, end: number, lo: number, hi: number): boolean {
  return i < end && b[i] >= lo && b[i] <= hi
}

/** Texts at least this long are scanned four bytes at a time. */
const WORD_SCAN = 32

/** The end of the run of PLAIN bytes starting at i (at most `end`). */
function plainRun (b: Uint8Array, i: number, end: number): number {
  if (end - i >= WORD_SCAN) {
    while (((b.byteOffset + i) & 3) !== 0 && TEXT_CLASS[b[i]] === PLAIN) i++
    if (((b.byteOffset + i) & 3) === 0) i = plainWords(b, i, end)
  }
  while (i < end && TEXT_CLASS[b[i]] === PLAIN) i++
  return i
}

/**
 * Skip whole 4-byte words with no byte that is >= 0x80, < 0x20, '"' or '\\'
 * (bit tricks that never miss such a byte); i is 4-aligned in the buffer.
 * Returns where the byte-by-byte scan goes on.
 */
function plainWords (b: Uint8Array, i: number, end: number): number {
  const words = (end - i) >> 2
  const w32 = new Uint32Array(b.buffer, b.byteOffset + i, words)
  let k = 0
  for (; k < words; k++) {
    const w = w32[k]
    const quote = w ^ 0x22222222
    const backslash = w ^ 0x5c5c5c5c
    const special = (w & 0x80808080) | // a byte >= 0x80
      ((w - 0x20202020) & ~w & 0x80808080) | // a byte < 0x20
      ((quote - 0x01010101) & ~quote & 0x80808080) | // a byte == '"'
      ((backslash - 0x01010101) & ~backslash & 0x80808080) // a byte == '\\'
    if (special !== 0) break
  }
  return i + k * 4
}

/**
 * b[start, end) as a JSON string: well-formed UTF-8 is copied, the characters
 * JSON.stringify escapes are escaped the same way (ECMA-262 QuoteJSONString).
 * False for ill-formed UTF-8 (the decoders replace it with U+FFFD). A leading
 * U+FEFF is text like any other: the decoders keep it (cbor-decode.ts).
 */
export function writeText (b: Uint8Array, start: number, end: number, out: JsonBytes): boolean {
  out.byte(QUOTE)
  let run = start
  let i = start
  while (i < end) {
    i = plainRun(b, i, end)
    if (i === end) break
    if (TEXT_CLASS[b[i]] === ESCAPE) {
      const ch = b[i]
      out.copy(b, run, i)
      out.ascii(SHORT_ESCAPES[ch] ?? '\\u00' + ch.toString(16).padStart(2, '0'))
      run = ++i
    } else {
      const len = utf8Length(b, i, end)
      if (len === 0) return false
      i += len
    }
  }
  out.copy(b, run, end)
  out.byte(QUOTE)
  return true
}

