// A mocha reporter (CommonJS: mocha require()s reporters and wants the class itself): the spec reporter's output, plus (when AMESH_TEST_FILE_TIMES=FILE
// is set) one JSON line per test file appended to FILE, in a serial run too:
// {file, ms, cpuMs, tests} — the file's wall time from its first suite starting to its
// last suite ending (its before/after hooks included) and the CPU time spent meanwhile
// by this process, the processes it waited for (CLI calls) and the processes the
// parent reaped (detached daemons, when the parent is test/utils/reap.pl).
//
//   AMESH_TEST_FILE_TIMES=/tmp/t.jsonl perl test/utils/reap.pl mocha \
//     --reporter dist/test/utils/file-times.cjs 'dist/test/**/*.test.js'
import { appendFileSync, readFileSync } from 'node:fs'
import Mocha = require('mocha')

const TICKS_PER_S = 100

/** utime+stime+cutime+cstime of `pid` in ms; the reaped children only for `childrenOnly`. */
function cpuMsOf (pid: number | 'self', childrenOnly: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    // fields 14-17 of stat(5); f[0] is field 3
    const [utime, stime, cutime, cstime] = [f[11], f[12], f[13], f[14]]
    const ticks = childrenOnly ? cutime + cstime : utime + stime + cutime + cstime
    return (ticks * 1000) / TICKS_PER_S
  } catch {
    return 0
  }
}

function cpuNowMs (): number {
  return cpuMsOf('self', false) + cpuMsOf(process.ppid, true)
}

interface Open { file: string, wall: number, cpu: number, tests: number }

class FileTimes extends Mocha.reporters.Spec {
  constructor (runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options)
    const out = process.env.AMESH_TEST_FILE_TIMES
    if (out === undefined || out === '') return
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
