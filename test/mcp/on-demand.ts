// Real MCP clients for the tests, installed on demand from the npm registry
// into a cache outside the project (never a project dependency): the MCP
// Inspector CLI and Claude Code. AMESH_TEST_CACHE overrides the cache folder.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export const CACHE = process.env.AMESH_TEST_CACHE ?? join(homedir(), '.cache', 'amesh-test')

export type Installed = { bin: string } | { skip: string }

/** `npm install` `pkg` into CACHE/<dir> unless its bin is there already; the bin path, or why not. */
export async function installOnDemand (dir: string, pkg: string, bin: string): Promise<Installed> {
  const prefix = join(CACHE, dir)
  const path = join(prefix, 'node_modules', '.bin', bin)
  if (existsSync(path)) return { bin: path }
  mkdirSync(prefix, { recursive: true })
  return await new Promise((resolve) => {
    execFile('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', pkg], { timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      if (err !== null) resolve({ skip: `npm install ${pkg} failed: ${stderr.trim().split('\n').slice(-3).join(' ') || err.message}` })
      else if (!existsSync(path)) resolve({ skip: `npm install ${pkg} left no ${bin} in ${prefix}` })
      else resolve({ bin: path })
    })
  })
}

export interface Run { code: number | null, stdout: string, stderr: string }

/** Run a command to its end; never rejects. */
export async function run (cmd: string, args: string[], opts: { cwd?: string, env?: NodeJS.ProcessEnv, timeout?: number } = {}): Promise<Run> {
  return await new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, timeout: opts.timeout ?? 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null
      resolve({ code, stdout, stderr })
    })
  })
}
