// The daemon's V8 heap policy. Under a burst of sends V8 grows the old
// generation by up to 4x the live heap per cycle (its default, tuned for
// short-lived throughput jobs): a host whose live heap is ~30 MiB reached
// 230 MiB RSS in the T6 benchmark. A long-lived daemon should hold memory in
// proportion to what it keeps, so the old generation grows by at most
// HEAP_GROWING_PERCENT per cycle: more frequent (mostly concurrent) major GCs,
// measured in docs/PERFORMANCE.md.
import { setFlagsFromString } from 'node:v8'

export const HEAP_GROWING_PERCENT = 20

const FLAG = 'heap-growing-percent'

/** Whether the operator already chose a heap growing policy (node flags or NODE_OPTIONS). */
function chosenByOperator (): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  return given.some((a) => a.replace(/_/g, '-').startsWith(`--${FLAG}`))
}

/**
 * Apply the daemon's heap policy (before the daemon stack loads); returns the
 * flag applied, or undefined when the operator set one. V8 reads this flag at
 * every major GC, so setting it at run time takes effect.
 */
export function tuneHeap (): string | undefined {
  if (chosenByOperator()) return undefined
  const flag = `--${FLAG}=${HEAP_GROWING_PERCENT}`
  setFlagsFromString(flag)
  applied = flag
  return flag
}

let applied: string | undefined

/** The heap flag this process applied (for `status`), if any. */
export function heapPolicy (): string | undefined { return applied }
