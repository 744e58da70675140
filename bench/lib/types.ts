// Shared types for the benchmark harness.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/** Which direction is better for a figure; decides how targets read. */
export type Better = 'lower' | 'higher'

/**
 * One measured number. If `baseline` names another figure (for example
 * 'B_rtt.p50', or a sum such as 'B_rtt.p50+B_fsync.p50'), the report
 * computes ratio = value / baseline value, and
 * `maxRatio` / `minRatio` turn that ratio into pass/fail. `max` / `min` are
 * absolute limits in the figure's own unit. A figure with no limit is
 * informational (pass column '-').
 */
export interface Figure {
  name: string
  value: number
  unit: string
  better: Better
  baseline?: string
  maxRatio?: number
  minRatio?: number
  max?: number
  min?: number
  note?: string
}

/** What a measurement gets from the runner. */
export interface BenchContext {
  readonly quick: boolean
  /** Pick `full` normally and `quick` under --quick. */
  count: (full: number, quick: number) => number
  /** A fresh temp directory, removed when the run ends. */
  tmpDir: (prefix: string) => Promise<string>
  /** Absolute path of dist/src/polyfill.js (workers load it with --import). */
  readonly polyfill: string
  /** Absolute path of the project root (where package.json and bin/ are). */
  readonly root: string
  log: (message: string) => void
}

/**
 * A registered measurement. `baselines` lists the names of the measurements
 * whose figures this one's ratios refer to, so `--only T1` also runs them.
 */
export interface Measurement {
  name: string
  description: string
  baselines?: string[]
  run: (ctx: BenchContext) => Promise<Figure[]>
}
