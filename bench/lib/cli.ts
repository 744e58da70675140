// Helpers for amesh measurements that drive the built CLI (bin/amesh).
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { nowMs } from './stats.js'
import type { BenchContext } from './types.js'

export interface CliResult { stdout: string, stderr: string, ms: number }

/**
 * Run `node bin/amesh <args>` (bin/amesh loads the polyfill itself) with
 * mDNS off, and return its output and wall time. Rejects on non-zero exit.
 */
export async function amesh (ctx: BenchContext, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const bin = join(ctx.root, 'bin', 'amesh')
  const t0 = nowMs()
  return await new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, ...args], {
      env: { ...process.env, AMESH_MDNS: 'off', ...env },
      maxBuffer: 64 * 1024 * 1024
    }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`amesh ${args.join(' ')}: ${err.message}\n${stderr}`))
      else resolve({ stdout, stderr, ms: nowMs() - t0 })
    })
  })
}

/** Poll `check` until it returns a value other than undefined, or time out. */
export async function waitFor<T> (check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 20): Promise<T> {
  const deadline = nowMs() + timeoutMs
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (nowMs() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, everyMs))
  }
}
