// Why T4's daemon CPU per entry moves between runs of one build: T4's steps
// run RUNS times, each in a fresh daemon filled as T4 fills it (N local
// sends, then settle), then STEPS replays in turn (default: follow, follow,
// read: the first follow is T4's own, right after the fill). Per step: wall
// µs per entry, the daemon's CPU ns per entry per thread (name#tid, user+system;
// the main thread, V8's workers, LevelDB's compaction thread, libuv's pool),
// this process's, and the LevelDB LOG lines written during the step (its
// compactions).
//   node --import ./dist/src/polyfill.js dist/bench/tools/t4-threads.js [N] [RUNS] [STEPS] [ROOT]
// STEPS: comma-separated follow | ndjson | read (default follow,follow,read);
// ROOT: a built checkout whose bin/amesh runs the daemon (default this one).
// AMESH_BENCH_NODE_ARGS=--trace-gc: the daemon's GCs go to its log, counted per step; each
// step prints its span in ms since the daemon was started (to cut a --cpu-prof profile with
// cpuprofile.js --skip-ms / --until-ms).
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Daemon } from '../lib/daemon.js'
import { nowMs } from '../lib/stats.js'
import { toolContext } from '../lib/tool-context.js'
import { threadLine, threads } from '../lib/threads.js'
import { fillInbox, followAll, readAllFramed, settle } from '../amesh/t4-replay.js'
import { PROJECT_ROOT } from '../lib/proc.js'

/** The LevelDB LOG files under a daemon's home. */
async function logFiles (dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...await logFiles(p))
    else if (e.name === 'LOG') out.push(p)
  }
  return out
}

async function textOf (files: string[]): Promise<string> {
  return (await Promise.all(files.map(async (f) => await readFile(f, 'utf8').catch(() => '')))).join('\n')
}

/** What a step's LOG lines and GC lines say, briefly. */
function newLines (before: string, after: string): string[] {
  return after.slice(before.length).split('\n').filter((l) => l.trim() !== '')
}

async function step (d: Daemon, n: number, what: string, born: number): Promise<string> {
  const logs = await logFiles(d.home)
  const l0 = await textOf(logs)
  const g0 = await readFile(join(d.home, 'amesh.log'), 'utf8').catch(() => '')
  const t0 = await threads(d.pid, true)
  const c0 = process.cpuUsage()
  const w0 = nowMs()
  if (what === 'read') await readAllFramed(d.control, 'dst', n)
  else await followAll(d, 'dst', n, what === 'ndjson' ? 'ndjson' : 'binary')
  const wall = (nowMs() - w0) * 1000 / n
  const c = process.cpuUsage(c0)
  const t1 = await threads(d.pid, true)
  const level = newLines(l0, await textOf(logs))
  const gc = newLines(g0, await readFile(join(d.home, 'amesh.log'), 'utf8').catch(() => ''))
  const marks = gc.filter((l) => l.includes('Mark-Compact') || l.includes('Mark-sweep'))
  const scav = gc.filter((l) => l.includes('Scavenge')).length
  const compactions = level.filter((l) => /Compact|compact/.test(l)).length
  let out = `  ${what.padEnd(7)} ${Math.round(w0 - born)}-${Math.round(nowMs() - born)} ms  wall ${wall.toFixed(1).padStart(5)}  client ${((c.user + c.system) / n).toFixed(1).padStart(5)}  daemon ${threadLine(t0, t1, n / 1000, 50)} (ns/entry)  gc: ${scav} scav, ${marks.length} mark  leveldb LOG lines ${level.length} (compaction ${compactions})\n`
  for (const m of marks) out += `      ${m.trim().slice(0, 160)}\n`
  for (const l of level.slice(0, 8)) out += `      LOG ${l.trim().slice(0, 160)}\n`
  return out
}

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000)
  const runs = Number(process.argv[3] ?? 3)
  const steps = (process.argv[4] ?? 'follow,follow,read').split(',')
  const root = process.argv[5] ?? PROJECT_ROOT
  const dir = await mkdtemp(join(tmpdir(), 'amesh-t4-threads-'))
  try {
    for (let r = 0; r < runs; r++) {
      const born = nowMs()
      const d = await Daemon.start({ ...toolContext(dir), root }, `t${r}`)
      try {
        const fill = await fillInbox(d, n)
        const settled = await settle(d)
        let out = `run ${r} (${root}): fill ${Math.round(fill)} ms, settle ${Math.round(settled)} ms, load ${(await readFile('/proc/loadavg', 'utf8')).split(' ')[0]}\n`
        for (const s of steps) out += await step(d, n, s, born)
        process.stdout.write(out)
      } finally {
        await d.stop()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
