// Small statistics helpers. Samples are in milliseconds unless stated.

function sorted (samples: readonly number[]): number[] {
  return [...samples].sort((a, b) => a - b)
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile (samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile of no samples')
  const s = sorted(samples)
  const rank = Math.ceil((p / 100) * s.length)
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]
}

export function p50 (samples: readonly number[]): number {
  return percentile(samples, 50)
}

export function p99 (samples: readonly number[]): number {
  return percentile(samples, 99)
}

export function mean (samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('mean of no samples')
  return samples.reduce((a, b) => a + b, 0) / samples.length
}

/** Items per second given a count and elapsed milliseconds. */
export function perSecond (count: number, elapsedMs: number): number {
  if (elapsedMs <= 0) throw new Error('elapsed time must be positive')
  return count / (elapsedMs / 1000)
}

/** Mebibytes per second given a byte count and elapsed milliseconds. */
export function mibPerSecond (bytes: number, elapsedMs: number): number {
  return perSecond(bytes, elapsedMs) / (1024 * 1024)
}

/** High-resolution wall clock in milliseconds. */
export function nowMs (): number {
  return Number(process.hrtime.bigint()) / 1e6
}

/** Round to a number of significant digits, for display and JSON. */
export function sig (value: number, digits = 4): number {
  if (value === 0 || !Number.isFinite(value)) return value
  return Number(value.toPrecision(digits))
}
