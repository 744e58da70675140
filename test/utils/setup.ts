// Loaded by mocha before any test (a root-hooks plugin, so it works the same in
// a serial run and in every worker of a parallel one): mDNS is multicast, so every
// host started by this test process (or by a CLI call it makes) runs with mDNS off.
// Tests of LAN discovery run inside namespace LANs, whose processes get an
// environment without AMESH_MDNS (see test/utils/netns.ts lanEnv()).
//
// AMESH_TEST_FILE_TIMES=FILE appends one JSON line per test file (parallel mode runs
// root hooks once per file; a serial run writes one line for the whole run):
// {files, ms, pid} — the file's wall time including its before/after hooks.
import { appendFileSync } from 'node:fs'

process.env.AMESH_MDNS = 'off'

let started = 0

function filesOf (ctx: Mocha.Context): string[] {
  const root = ctx.test?.parent
  return [...new Set((root?.suites ?? []).map((s) => s.file ?? '').filter((f) => f !== ''))]
}

export const mochaHooks = {
  beforeAll (): void {
    process.env.AMESH_MDNS = 'off'
    started = Date.now()
  },
  afterAll (this: Mocha.Context): void {
    const out = process.env.AMESH_TEST_FILE_TIMES
    if (out === undefined || out === '') return
    appendFileSync(out, JSON.stringify({ files: filesOf(this), ms: Date.now() - started, pid: process.pid }) + '\n')
  }
}
