// Where a daemon's garbage comes from: a preload that samples every
// allocation (objects a GC collected included, which `--heap-prof` leaves
// out) from ALLOC_START_S to ALLOC_STOP_S seconds after the process started
// and writes ALLOC_DIR/<pid>.heapprofile; then summarise it by package and
// by function:
//   ALLOC_DIR=/tmp/alloc AMESH_BENCH_NODE_ARGS="--import $PWD/dist/bench/tools/alloc-sample.js" \
//     node --import ./dist/src/polyfill.js dist/bench/tools/t1-trace.js 1500
//   node dist/bench/tools/alloc-sample.js /tmp/alloc/<pid>.heapprofile [--top N]
// (As a preload it only arms timers, unref'd: the process runs and exits as it would.)
import { Session } from 'node:inspector'
import { readFileSync, writeFileSync } from 'node:fs'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface HeapNode { callFrame: CallFrame, selfSize: number, children?: HeapNode[] }

const SECOND = 1000
/** bytes between samples: small enough that a few seconds of one packet at a time are thousands of samples */
const SAMPLE_BYTES = 8192

function arm (dir: string, startMs: number, stopMs: number): void {
  const session = new Session()
  session.connect()
  setTimeout(() => {
    session.post('HeapProfiler.enable', () => {
      session.post('HeapProfiler.startSampling', { samplingInterval: SAMPLE_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
    })
    setTimeout(() => {
      session.post('HeapProfiler.stopSampling', (err, r) => {
        writeFileSync(`${dir}/${process.pid}.heapprofile`, err === null ? JSON.stringify(r.profile) : String(err))
      })
    }, stopMs - startMs).unref()
  }, startMs).unref()
}

/** package name (node_modules), path under dist/, or the url */
function where (url: string): string {
  const u = url.replace(/^file:\/\//, '')
  const nm = u.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const rest = u.slice(nm + 13).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  const dist = u.indexOf('/dist/')
  return dist >= 0 ? u.slice(dist + 6) : u === '' ? '(native)' : u
}

function summarise (file: string, top: number): void {
  const head = (JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head
  const byPkg = new Map<string, number>()
  const byFn = new Map<string, number>()
  let total = 0
  const add = (m: Map<string, number>, k: string, v: number): void => { m.set(k, (m.get(k) ?? 0) + v) }
  const stack: HeapNode[] = [head]
  while (stack.length > 0) {
    const n = stack.pop() as HeapNode
    const cf = n.callFrame
    total += n.selfSize
    if (n.selfSize > 0) {
      add(byPkg, where(cf.url), n.selfSize)
      add(byFn, `${cf.functionName === '' ? '(anonymous)' : cf.functionName} ${where(cf.url)}:${cf.lineNumber + 1}`, n.selfSize)
    }
    stack.push(...(n.children ?? []))
  }
  const show = (title: string, m: Map<string, number>): void => {
    process.stdout.write(`${title}\n`)
    for (const [k, v] of [...m].sort((x, y) => y[1] - x[1]).slice(0, top)) process.stdout.write(`  ${(v / 1e6).toFixed(2).padStart(7)} MB ${(100 * v / total).toFixed(1).padStart(5)} %  ${k}\n`)
  }
  process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} MB allocated in the sampled window\n`)
  show('by package / file', byPkg)
  show('by function', byFn)
}

const file = process.argv[2]
if (file !== undefined && file.endsWith('.heapprofile')) {
  const at = process.argv.indexOf('--top')
  summarise(file, at > 0 ? Number(process.argv[at + 1]) : 25)
} else if (process.env.ALLOC_DIR !== undefined) {
  arm(process.env.ALLOC_DIR, Number(process.env.ALLOC_START_S ?? 5) * SECOND, Number(process.env.ALLOC_STOP_S ?? 9) * SECOND)
}
