// Loaded by mocha before any test (a root-hooks plugin, so it works the same in
// a serial run and in every worker of a parallel one): mDNS is multicast, so every
// host started by this test process (or by a CLI call it makes) runs with mDNS off.
// Tests of LAN discovery run inside namespace LANs, whose processes get an
// environment without AMESH_MDNS (see test/utils/netns.ts lanEnv()).
//
// AMESH_TEST_FILE_TIMES=FILE in a parallel run (`npm test`): a worker runs one file at
// a time and its root hooks run once per file, so each worker appends one JSON line per
// file: {file, ms, cpuMs, tests, worker} — the file's wall time including its
// before/after hooks, and the CPU of the worker and of the processes it waited for (CLI
// calls; not the detached daemons, which test/utils/reap.pl reaps for both workers).
// The reporter (test/utils/file-times.cts) writes the lines of a serial run; in a
// parallel run it sees each file's events only once the file has ended.
import { appendFileSync, readFileSync } from 'node:fs'

process.env.AMESH_MDNS = 'off'

const TICKS_PER_S = 100
/** a mocha --parallel worker is a child process with an IPC channel to mocha */
const IN_WORKER = typeof process.send === 'function'

let started = 0
let cpuAtStart = 0
let tests = 0

/** CPU ms of this process and its reaped children, from /proc/self/stat (fields 14-17) */
function cpuMs (): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    return ((f[11] + f[12] + f[13] + f[14]) * 1000) / TICKS_PER_S
  } catch {
    return 0
  }
}

function filesOf (ctx: Mocha.Context): string[] {
  const root = ctx.test?.parent
  return [...new Set((root?.suites ?? []).map((s) => s.file ?? '').filter((f) => f !== ''))]
}

export const mochaHooks = {
  beforeAll (): void {
    process.env.AMESH_MDNS = 'off'
    started = Date.now()
    cpuAtStart = cpuMs()
    tests = 0
  },
  afterEach (): void { tests++ },
  afterAll (this: Mocha.Context): void {
    const out = process.env.AMESH_TEST_FILE_TIMES
    if (!IN_WORKER || out === undefined || out === '') return
    const line = { file: filesOf(this).join(' '), ms: Date.now() - started, cpuMs: Math.round(cpuMs() - cpuAtStart), tests, worker: process.pid }
    appendFileSync(out, JSON.stringify(line) + '\n')
  }
}
