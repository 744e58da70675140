import { Buffer } from 'node:buffer'

/**
 * A growable buffer of UTF-8 JSON text. Replies that carry many entries (a
 * page of an inbox stream) are encoded straight into one of these and sent in
 * one socket write, without a JavaScript string per entry.
 */
export class JsonBytes {
  private buf: Buffer
  length = 0

  constructor (initial = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(64, initial))
  }

  /** Room for `n` more bytes; returns the buffer to write into at `length`. */
  reserve (n: number): Buffer {
    const need = this.length + n
    if (need > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2))
      this.buf.copy(grown, 0, 0, this.length)
      this.buf = grown
    }
    return this.buf
  }

  /** Text known to be ASCII (field names, numbers, punctuation). */
  ascii (s: string): void {
    const n = s.length
    const buf = this.reserve(n)
    if (n > 32) {
      this.length += buf.write(s, this.length, n, 'latin1')
      return
    }
    for (let i = 0; i < n; i++) buf[this.length + i] = s.charCodeAt(i)
    this.length += n
  }

  /** Any text, as UTF-8. */
  text (s: string): void {
    const max = s.length * 3
    this.reserve(max)
    this.length += this.buf.write(s, this.length, max, 'utf8')
  }

  byte (b: number): void {
    this.reserve(1)
    this.buf[this.length++] = b
  }

  /** All of `src`. */
  append (src: Uint8Array): void {
    const n = src.length
    const buf = this.reserve(n)
    if (n > 16) {
      buf.set(src, this.length)
    } else {
      for (let i = 0; i < n; i++) buf[this.length + i] = src[i]
    }
    this.length += n
  }

  /** Raw bytes src[start, end). */
  copy (src: Uint8Array, start: number, end: number): void {
    const n = end - start
    const buf = this.reserve(n)
    if (n > 64) {
      // a plain view: Buffer#subarray costs more than the copy of a short run
      buf.set(new Uint8Array(src.buffer, src.byteOffset + start, n), this.length)
    } else {
      for (let i = 0; i < n; i++) buf[this.length + i] = src[start + i]
    }
    this.length += n
  }

  /** Any JSON-able value, through JSON.stringify. */
  json (value: unknown): void {
    this.text(JSON.stringify(value))
  }

  /** The bytes written so far (a view: write nothing more once it is handed on). */
  bytes (): Buffer {
    return this.buf.subarray(0, this.length)
  }
}
