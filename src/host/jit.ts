// The daemon's JIT tier-up policy. V8 optimizes a function (TurboFan) once it
// has run about --interrupt-budget bytes of bytecode since its last check
// (66 KiB in node 20's V8): tuned for code that runs hot in a loop. A daemon
// handling one packet at a time runs each function of the path once per
// packet, so on a host that just started most of that path stays in the
// baseline tiers for thousands of packets, and the compiler runs on the
// path's cores all through them (docs/PERFORMANCE.md, session 12 T1: V8's
// workers 270-320 µs of TurboFan compiling per T1 packet; session 13 T1: the
// main thread in Builtins_LoadIC and baseline prologues). A smaller budget
// compiles the same functions earlier: the warm-up ends sooner, not with
// fewer cores for it (lowering the compiler's priority instead cost fan-in).
import { setFlagsFromString } from 'node:v8'
import { chosenByOperator } from './heap.js'

/** bytes of bytecode a function runs between tier-up checks (V8's default here: 67,584) */
export const INTERRUPT_BUDGET = 16_896

const FLAG = 'interrupt-budget'

/**
 * Apply the daemon's tier-up budget (before the daemon stack loads: V8 reads
 * it each time a function's budget is reset, so code loaded after this and
 * every function at its next check use it); returns the flag applied, or
 * undefined when the operator set one.
 */
export function tuneJit (): string | undefined {
  if (chosenByOperator(FLAG)) return undefined
  const flag = `--${FLAG}=${INTERRUPT_BUDGET}`
  setFlagsFromString(flag)
  return flag
}
