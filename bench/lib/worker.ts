// Child side of bench workers: read the JSON argument, report over IPC (or
// stdout JSON lines when run by hand), exit when told or when orphaned.
import type { Json, JsonObject } from './types.js'
import type { WorkerMessage } from './proc.js'
import { isWorkerMessage } from './proc.js'

export function workerArgs (): JsonObject {
  const raw = process.argv[2] ?? '{}'
  const parsed: unknown = JSON.parse(raw)
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('worker argument must be a JSON object')
  }
  return parsed as JsonObject
}

export function argNum (args: JsonObject, key: string, fallback?: number): number {
  const v: Json | undefined = args[key]
  if (typeof v === 'number') return v
  if (fallback !== undefined) return fallback
  throw new Error(`worker needs number argument '${key}'`)
}

export function argStr (args: JsonObject, key: string, fallback?: string): string {
  const v: Json | undefined = args[key]
  if (typeof v === 'string') return v
  if (fallback !== undefined) return fallback
  throw new Error(`worker needs string argument '${key}'`)
}

/** Send a message to the parent; resolves once it has been handed over. */
export async function report (msg: WorkerMessage): Promise<void> {
  const send = process.send?.bind(process)
  if (send === undefined) {
    process.stdout.write(JSON.stringify(msg) + '\n')
    return
  }
  await new Promise<void>((resolve, reject) => {
    send(msg, undefined, {}, (err: Error | null) => { if (err === null) resolve(); else reject(err) })
  })
}

/** Report a final result and exit. */
export async function finish (msg: WorkerMessage): Promise<never> {
  await report(msg)
  process.exit(0)
}

/** Call `onStop` on a parent 'stop' message (an orphaned worker just exits). */
export function onStop (onStopFn: () => Promise<void>): void {
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    onStopFn().then(() => process.exit(0), () => process.exit(1))
  }
  process.on('message', (raw: unknown) => { if (isWorkerMessage(raw) && raw.type === 'stop') stop() })
}

/** Run a worker body; report its error to the parent and exit non-zero. */
export function runWorker (body: () => Promise<void>): void {
  process.on('disconnect', () => process.exit(0))
  body().catch((err: unknown) => {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err)
    report({ type: 'error', message }).finally(() => process.exit(1)).catch(() => process.exit(1))
  })
}
