// DAG-CBOR decoding that keeps a text string's leading U+FEFF.
//
// cborg (under @ipld/dag-cbor) turns text into strings with a default
// TextDecoder, which drops a leading byte order mark: a message whose text
// starts with U+FEFF was stored byte for byte but read back without it. This
// decoder is dag-cbor's (same options, same strictness, same CID tag) with one
// difference: a text string whose bytes start with EF BB BF is decoded again
// with a TextDecoder that keeps the mark. Invalid UTF-8 still becomes U+FFFD,
// as before. Every reader of packets and stored packet values uses it, so the
// fast decoders (which leave such strings to this one) and the reference agree.
import { decode as cborgDecode, Tokenizer, Type } from 'cborg'
import type { DecodeOptions } from 'cborg'
import { decodeOptions } from '@ipld/dag-cbor'

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true })

/** Bytes of a CBOR head by its minor (additional information) value. */
function headBytes (minor: number): number {
  if (minor < 24) return 1
  return minor === 24 ? 2 : minor === 25 ? 3 : minor === 26 ? 5 : 9
}

function startsWithBom (data: Uint8Array, at: number): boolean {
  return data[at] === 0xef && data[at + 1] === 0xbb && data[at + 2] === 0xbf
}

class BomKeepingTokenizer extends Tokenizer {
  override next (): ReturnType<Tokenizer['next']> {
    const start = this._pos
    const token = super.next()
    if (token.type === Type.string) {
      const body = start + headBytes(this.data[start] & 31)
      if (startsWithBom(this.data, body)) token.value = keepBom.decode(this.data.subarray(body, start + token.encodedLength!))
    }
    return token
  }
}

/** Decodes DAG-CBOR exactly as `@ipld/dag-cbor`'s `decode`, except that a leading U+FEFF of a text string is kept. */
export function decodeCbor<T = unknown> (bytes: Uint8Array): T {
  const data = bytes instanceof Uint8Array && bytes.constructor !== Uint8Array
    ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : bytes
  const options: DecodeOptions = { ...decodeOptions }
  options.tokenizer = new BomKeepingTokenizer(data, options)
  return cborgDecode(data, options) as T
}
