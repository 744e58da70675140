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

/** Splits a byte stream into lines, refusing lines over the bound. */
export class LineSplitter {
  private buf = ''
  constructor (private readonly onLine: (line: string) => void, private readonly max = MAX_LINE_BYTES) {}

  push (chunk: string): void {
    const parts = (this.buf + chunk).split('\n')
    this.buf = parts.pop() ?? ''
    for (const line of parts) {
      if (line.trim() !== '') this.onLine(line)
    }
    if (this.buf.length > this.max) throw new Error(`control line longer than ${this.max} bytes`)
  }
}
