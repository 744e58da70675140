// A mocha reporter (CommonJS: mocha require()s reporters and wants the class itself): the spec reporter's output, plus (when AMESH_TEST_FILE_TIMES=FILE
// is set) one JSON line per test file appended to FILE, in a serial run (a parallel run's
// lines come from test/utils/setup.ts in each worker):
// {file, ms, cpuMs, tests} — the file's wall time from its first suite starting to its
// last suite ending (its before/after hooks included) and the CPU time spent meanwhile
// by this process, the processes it waited for (CLI calls) and the processes its
// ancestors reaped (detached daemons, which test/utils/reap.pl reaps; npx and sh in
// between reap nothing before mocha ends).
//
//   AMESH_TEST_FILE_TIMES=/tmp/t.jsonl perl test/utils/reap.pl mocha \
//     --reporter dist/test/utils/file-times.cjs 'dist/test/**/*.test.js'
import { appendFileSync, readFileSync } from 'node:fs'
import Mocha = require('mocha')

const TICKS_PER_S = 100

interface Stat { ppid: number, ownMs: number, childrenMs: number }

/** fields 4 and 14-17 of /proc/PID/stat(5), times in ms; undefined once the process is gone */
function statOf (pid: number | 'self'): Stat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number) // f[0] is field 3
    return { ppid: f[1], ownMs: ((f[11] + f[12]) * 1000) / TICKS_PER_S, childrenMs: ((f[13] + f[14]) * 1000) / TICKS_PER_S }
  } catch {
    return undefined
  }
}

/** this process's CPU, its reaped children's, and what every ancestor below PID 1 reaped */
function cpuNowMs (): number {
  const self = statOf('self')
  if (self === undefined) return 0
  let ms = self.ownMs + self.childrenMs
  for (let pid = self.ppid; pid > 1;) {
    const up = statOf(pid)
    if (up === undefined) break
    ms += up.childrenMs
    pid = up.ppid
  }
  return ms
}

interface Open { file: string, wall: number, cpu: number, tests: number }

class FileTimes extends Mocha.reporters.Spec {
  constructor (runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options)
    const out = process.env.AMESH_TEST_FILE_TIMES
    // in a parallel run each worker's root hooks write the lines (test/utils/setup.ts):
    // this process gets a file's events only once the file has ended
    if (out === undefined || out === '' || options?.parallel === true) return
    let open: Open | undefined
    const close = (): void => {
      if (open === undefined) return
      const line = { file: open.file, ms: Date.now() - open.wall, cpuMs: Math.round(cpuNowMs() - open.cpu), tests: open.tests }
      appendFileSync(out, JSON.stringify(line) + '\n')
      open = undefined
    }
    runner.on('suite', (suite: Mocha.Suite) => {
      const file = suite.file
      if (file === undefined || suite.parent?.root !== true || open?.file === file) return
      close()
      open = { file, wall: Date.now(), cpu: cpuNowMs(), tests: 0 }
    })
    runner.on('test end', () => { if (open !== undefined) open.tests++ })
    runner.on('end', close)
  }
}

export = FileTimes
