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

/** Whether the operator already chose a node flag (node flags, NODE_OPTIONS, or `also`). */
export function chosenByOperator (flag: string, also: readonly string[] = []): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/), ...also]
  return given.some((a) => a.replace(/_/g, '-').startsWith(`--${flag}`))
}

/**
 * The young generation's bound, MiB per semi-space. V8 sizes it from the
 * machine (16 MiB per semi-space here, two of them, reached during start-up):
 * a third of an idle host's V8 heap was empty new space, and a burst added
 * ~20 MiB of RSS more. Measured (bench/tools/heap-ab.ts, T2 bursts of 30,000,
 * alternated, docs/PERFORMANCE.md session 7): 8 MiB takes ~20 MiB off the
 * sender's and ~25 off the receiver's peak at the same CPU per packet; 4 MiB
 * takes ~27 off but costs the sender ~35 % more CPU per packet (more
 * scavenges, more promotion).
 */
export const SEMI_SPACE_MIB = 8

const SEMI_FLAG = 'max-semi-space-size'

/**
 * Node flags the daemon process must be started with (V8 sizes its young
 * generation when the process starts, so unlike the growing policy this
 * cannot be set from inside): used where amesh spawns a daemon (`up
 * --detach`, which every command that starts a daemon goes through) and by
 * the bench. A flag the operator gave (node flags, NODE_OPTIONS, `given`) is
 * left to theirs.
 */
export function daemonNodeFlags (given: readonly string[] = []): string[] {
  return chosenByOperator(SEMI_FLAG, given) ? [] : [`--${SEMI_FLAG}=${SEMI_SPACE_MIB}`]
}

/**
 * glibc malloc's trim threshold for the daemon, bytes. By default glibc
 * raises its mmap threshold (and with it the trim threshold, to twice that)
 * each time a large mmapped block is freed, up to 32 MiB / 64 MiB: after a
 * burst freed the store's batches and socket buffers, the free memory at the
 * top of the malloc heap stayed resident. A fixed threshold turns that
 * adjustment off: blocks of 128 KiB and more are mmapped and returned when
 * freed, and the heap's free top is returned above 128 KiB. Measured
 * (memory-probe and T2 bursts alternated, docs/PERFORMANCE.md session 8):
 * the receiver's peak ~10-25 MiB lower, the idle hosts ~3-5, at the same
 * CPU per packet. glibc reads it when the process starts, so like the young
 * generation it is given at spawn (an environment variable).
 */
export const MALLOC_TRIM_BYTES = 128 * 1024

/** glibc's malloc tunables that, set by the operator, leave the daemon's allocator to theirs */
const MALLOC_ENV = ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_']

/** Whether the environment already tunes glibc's allocator (its variables, or malloc tunables in GLIBC_TUNABLES) */
const mallocTuned = (env: NodeJS.ProcessEnv): boolean =>
  MALLOC_ENV.some((name) => env[name] !== undefined) || (env.GLIBC_TUNABLES ?? '').includes('glibc.malloc.')

/**
 * Environment variables the daemon process must be started with (next to
 * daemonNodeFlags): the malloc trim threshold, unless the operator's
 * environment already tunes glibc's allocator. Other C libraries ignore it.
 */
export function daemonEnv (env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return mallocTuned(env) ? {} : { MALLOC_TRIM_THRESHOLD_: String(MALLOC_TRIM_BYTES) }
}

/**
 * Apply the daemon's heap policy (before the daemon stack loads); returns the
 * flag applied, or undefined when the operator set one. V8 reads this flag at
 * every major GC, so setting it at run time takes effect.
 */
export function tuneHeap (): string | undefined {
  if (chosenByOperator(FLAG)) return undefined
  const flag = `--${FLAG}=${HEAP_GROWING_PERCENT}`
  setFlagsFromString(flag)
  applied = flag
  return flag
}

let applied: string | undefined

/** The heap flag this process applied (for `status`), if any. */
export function heapPolicy (): string | undefined { return applied }
