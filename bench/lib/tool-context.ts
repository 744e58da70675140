// The BenchContext for a standalone tool (bench/tools/*): full counts, temp
// directories under one root the tool removes when done, log lines to stdout.
import { mkdtemp } from 'node:fs/promises'
import { join } from 'node:path'
import { POLYFILL, PROJECT_ROOT } from './proc.js'
import type { BenchContext } from './types.js'

export function toolContext (root: string): BenchContext {
  return {
    quick: false,
    count: (full) => full,
    root: PROJECT_ROOT,
    polyfill: POLYFILL,
    tmpDir: async (label: string) => await mkdtemp(join(root, label)),
    log: (msg: string) => { process.stdout.write(`${msg}\n`) }
  }
}
