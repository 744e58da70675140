// The control-socket protocol: newline-delimited JSON over a Unix socket.
//   request   {"id": 1, "method": "send", "params": {...}}
//   response  {"id": 1, "result": ...}  or  {"id": 1, "error": {"code": "...", "message": "..."}}
//   stream    {"id": 1, "event": ...}  ...  {"id": 1, "end": true}

export const MAX_LINE_BYTES = 16 * 1024 * 1024

export interface Request { id: number, method: string, params?: unknown }
export interface ErrorBody { code: string, message: string }
export type Reply =
  | { id: number, result: unknown }
  | { id: number, error: ErrorBody }
  | { id: number, event: unknown }
  | { id: number, end: true }

/**
 * Splits a text stream into lines, refusing lines over the bound. Each chunk
 * is searched once: a line that spans chunks is held in pieces and joined
 * when its newline arrives (a reply of megabytes costs linear time).
 */
export class LineSplitter {
  private held: string[] = []
  private heldLength = 0
  constructor (private readonly onLine: (line: string) => void, private readonly max = MAX_LINE_BYTES) {}

  push (chunk: string): void {
    let start = 0
    let nl = chunk.indexOf('\n')
    while (nl !== -1) {
      let line = chunk.slice(start, nl)
      if (this.held.length > 0) {
        this.held.push(line)
        line = this.held.join('')
        this.held = []
        this.heldLength = 0
      }
      if (line.trim() !== '') this.onLine(line)
      start = nl + 1
      nl = chunk.indexOf('\n', start)
    }
    if (start < chunk.length) {
      this.held.push(start === 0 ? chunk : chunk.slice(start))
      this.heldLength += chunk.length - start
    }
    if (this.heldLength > this.max) throw new Error(`control line longer than ${this.max} bytes`)
  }
}
