// The daemon's V8 heap policy. Under a burst of sends V8 lets the old
// generation grow up to 4x the live heap between major GCs (its default,
// tuned for short-lived throughput jobs): a host whose live heap is ~30 MiB
// reached 200-235 MiB RSS in the T2/T6 benchmarks. A long-lived daemon should
// hold memory in proportion to what it keeps, so the old generation may at
// most double between major GCs. Measured (bench/tools/heap-ab.ts, T2 bursts
// alternated): 100 % costs no throughput and takes ~35 MiB off the peak;
// 20 % takes ~55 MiB off but costs ~18 % of T2 (docs/PERFORMANCE.md).
import { setFlagsFromString } from 'node:v8'

export const HEAP_GROWING_PERCENT = 100

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
