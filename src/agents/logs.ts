// A managed node's captured stdout/stderr: `<home>/agents/<name>/output.log`,
// shifted to output.log.1 … .LOG_KEEP when it grows past LOG_MAX_BYTES.
import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { LOG_FILE, LOG_KEEP, LOG_MAX_BYTES } from './constants.js'

export { logFiles } from '../control/agent-files.js'

export interface LogOptions {
  /** default LOG_MAX_BYTES */
  maxBytes?: number
  /** rotated files kept; default LOG_KEEP */
  keep?: number
}

export class RotatingLog {
  private size: number
  private readonly maxBytes: number
  private readonly keep: number
  readonly file: string

  constructor (private readonly dir: string, opts: LogOptions = {}) {
    mkdirSync(dir, { recursive: true })
    this.file = join(dir, LOG_FILE)
    this.maxBytes = opts.maxBytes ?? LOG_MAX_BYTES
    this.keep = opts.keep ?? LOG_KEEP
    this.size = existsSync(this.file) ? statSync(this.file).size : 0
  }

  write (chunk: string | Uint8Array): void {
    if (this.size >= this.maxBytes) this.rotate()
    try {
      appendFileSync(this.file, chunk)
      this.size += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length
    } catch {
      // a full disk must not take the daemon down; the output is lost
    }
  }

  /** A line from the supervisor itself, marked as such. */
  note (message: string): void {
    this.write(`[amesh ${new Date().toISOString()}] ${message}\n`)
  }

  private rotate (): void {
    rmSync(join(this.dir, `${LOG_FILE}.${this.keep}`), { force: true })
    for (let i = this.keep - 1; i >= 1; i--) {
      const from = join(this.dir, `${LOG_FILE}.${i}`)
      if (existsSync(from)) renameSync(from, join(this.dir, `${LOG_FILE}.${i + 1}`))
    }
    if (existsSync(this.file)) renameSync(this.file, join(this.dir, `${LOG_FILE}.1`))
    this.size = 0
  }
}
