// Buffer's own string slices (what toString('latin1' | 'utf8', s, e) calls
// after checking its arguments), for decoders that have checked their bounds
// already: one native call, no argument checks, no intermediate view.
import { Buffer } from 'node:buffer'

export type Slice = (this: Uint8Array, start: number, end: number) => string

type Slices = { latin1Slice?: Slice, utf8Slice?: Slice }
const own = Buffer.prototype as unknown as Slices

function viaBuffer (encoding: 'latin1' | 'utf8'): Slice {
  return function (this: Uint8Array, start: number, end: number) {
    return Buffer.from(this.buffer, this.byteOffset, this.byteLength).toString(encoding, start, end)
  }
}

/** bytes [start, end) of a Uint8Array as Latin-1 (for ASCII: the text itself) */
export const latin1Slice: Slice = own.latin1Slice ?? viaBuffer('latin1')
/** bytes [start, end) of a Uint8Array as UTF-8 (ill-formed sequences become U+FFFD) */
export const utf8Slice: Slice = own.utf8Slice ?? viaBuffer('utf8')
