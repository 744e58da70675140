// A bounded cursor over CBOR bytes: it reads one head at a time and never
// reads past the end. Strict in the way DAG-CBOR is: minimal-length
// arguments, definite lengths, integers that are safe in JavaScript; of the
// simple values only false, true and null. What falls outside that is
// reported (false / -1), never thrown, so each user decides what it means:
// the direct packet decoder (decode-fast.ts) leaves such bytes to dag-cbor,
// the byte renderer (render-json.ts) to the object renderer.

export const MAJOR_UINT = 0
export const MAJOR_NEGINT = 1
export const MAJOR_BYTES = 2
export const MAJOR_TEXT = 3
export const MAJOR_ARRAY = 4
export const MAJOR_MAP = 5
export const MAJOR_TAG = 6
export const MAJOR_SIMPLE = 7
export const SIMPLE_FALSE = 20
export const SIMPLE_TRUE = 21
export const SIMPLE_NULL = 22
/** the whole byte of false and true */
export const FALSE = 0xf4
export const TRUE = 0xf5

const TWO_32 = 4294967296
const EMPTY = new Uint8Array(0)

export class CborCursor {
  /** the bytes read; `end` is their length */
  bytes: Uint8Array = EMPTY
  end = 0
  /** where the next head starts */
  pos = 0
  /** the major type and argument of the last head read */
  major = 0
  arg = 0

  /** Read `bytes` from `pos`. */
  reset (bytes: Uint8Array, pos = 0): void {
    this.bytes = bytes
    this.end = bytes.length
    this.pos = pos
  }

  done (): boolean { return this.pos === this.end }

  /**
   * Read the head at `pos` into major/arg and move past it. False for a head
   * outside the strict subset (past the end, non-minimal, indefinite, at
   * least 2^53, a float or a simple value other than false/true/null).
   */
  next (): boolean {
    const p = this.pos
    if (p >= this.end) return false
    const ib = this.bytes[p]
    const major = ib >>> 5
    this.major = major
    if (major === MAJOR_SIMPLE) {
      const minor = ib & 31
      this.arg = minor
      this.pos = p + 1
      return minor >= SIMPLE_FALSE && minor <= SIMPLE_NULL
    }
    const minor = ib & 31
    if (minor < 24) { this.arg = minor; this.pos = p + 1; return true }
    return this.argument(p, minor)
  }

  /** The argument of the head at `pos`, which must be of `major` (0..6), moving past it; -1 when it is not. */
  expect (major: number): number {
    const p = this.pos
    if (p >= this.end) return -1
    const ib = this.bytes[p]
    if (ib >>> 5 !== major) return -1
    this.major = major
    const minor = ib & 31
    if (minor < 24) { this.pos = p + 1; this.arg = minor; return minor }
    return this.argument(p, minor) ? this.arg : -1
  }

  /** The argument (minor 24..31) of the head at p into arg, pos past it; false when not minimal or too long. */
  private argument (p: number, minor: number): boolean {
    const d = this.bytes
    if (minor === 24) {
      if (p + 2 > this.end || d[p + 1] < 24) return false
      this.arg = d[p + 1]; this.pos = p + 2
      return true
    }
    if (minor === 25) {
      if (p + 3 > this.end) return false
      const v = (d[p + 1] << 8) | d[p + 2]
      this.arg = v; this.pos = p + 3
      return v >= 0x100
    }
    if (minor === 26) {
      if (p + 5 > this.end) return false
      const v = u32(d, p + 1)
      this.arg = v; this.pos = p + 5
      return v >= 0x10000
    }
    if (minor === 27) {
      if (p + 9 > this.end) return false
      const hi = u32(d, p + 1)
      // minimal means at least 2^32; a safe integer is below 2^53
      if (hi === 0 || hi >= 0x200000) return false
      this.arg = hi * TWO_32 + u32(d, p + 5); this.pos = p + 9
      return true
    }
    return false
  }
}

function u32 (b: Uint8Array, p: number): number {
  return b[p] * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3])
}
