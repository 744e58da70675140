// Where one T1 packet's time goes: the daemons run with AMESH_TRACE
// (src/util/trace.ts: marks on the monotonic clock at each stage of the
// path), this client marks the send call, its reply and the follow event on
// the same clock; per sample every stage's first mark after the send call is
// taken, and the medians (p50, p90) of each stage's offset from the send
// call and of the step from the stage before are printed in path order.
//   node --import ./dist/src/polyfill.js dist/bench/tools/t1-trace.js [SAMPLES [ROOT...]]
// T1_WARMUP=N sends N unsampled packets first (the bench's T1: 3,000).
// T1_KEEP=1 keeps the hosts' homes and prints where, with the first send's wall-clock time.
// With several ROOTs (checkouts with a built dist/), each gets a pair in turn.
// T1_PERF=1 also samples both daemons with `perf record` (bench/lib/perf-threads.ts) during the
// samples and prints, per thread role, the CPU in the way in, the commit steps and the whole sample.
// T1_SCHED=1 (also, or alone) records the scheduler (bench/lib/sched-wait.ts, `perf record -a`): how long
// the daemons' main and pool threads and this client waited for a CPU in each sample, and who ran meanwhile.
// T1_WORKER_NICE=N|idle (experiment) renices the daemons' V8 workers before the samples (idle: SCHED_IDLE).
// perf and the scheduler's tracepoints need root.
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { setPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolContext } from '../lib/tool-context.js'
import { followInbox, sendMany, text } from '../lib/daemon.js'
import { percentile } from '../lib/stats.js'
import { RX, TX, startPair } from '../amesh/pair.js'
import { readSched, startSched, threadRoles, whoRan, type SchedTrace } from '../lib/sched-wait.js'
import { PERIOD_US, activityOf, readPerf, roleOf, startPerf, topSymbols, within, type PerfRun, type PerfSample } from '../lib/perf-threads.js'

/** marks in time order, and the process's garbage collections (start, duration µs, kind) */
interface Marks { at: bigint[], cpu: number[], stage: string[], gc: Array<[bigint, number, string]> }

const now = (): bigint => process.hrtime.bigint()

async function readMarks (file: string): Promise<Marks> {
  const out: Marks = { at: [], cpu: [], stage: [], gc: [] }
  const body = await readFile(file, 'utf8').catch(() => '')
  for (const line of body.split('\n')) {
    const [at, cpu, stage, extra, kind] = line.split(' ')
    if (stage === undefined) continue
    if (stage === 'gc') { out.gc.push([BigInt(at), Number(extra), kind ?? '?']); continue }
    out.at.push(BigInt(at))
    out.cpu.push(Number(cpu))
    out.stage.push(stage)
  }
  return out
}

/**
 * The path in order: each stage is looked for after the one it follows (its
 * `after`), in the marks of its process, within the sample (before the next
 * send call). The ack and the outbox removal of one sample may come after the
 * next send call; they are looked for up to the sample after.
 */
const PATH: Array<[string, string | undefined]> = [
  ['A:ctl.in.send', undefined],
  ['A:commit.queued', 'A:ctl.in.send'],
  ['A:commit.start', 'A:commit.queued'],
  ['A:commit.done', 'A:commit.start'],
  ['A:outbox.durable', 'A:commit.done'],
  ['A:link.frame', 'A:commit.queued'],
  ['A:ctl.out.send', 'A:outbox.durable'],
  ['C:reply', 'A:ctl.out.send'],
  ['B:rx.frame', 'A:link.frame'],
  ['B:rx.admitted', 'B:rx.frame'],
  ['B:commit.queued', 'B:rx.admitted'],
  ['B:commit.start', 'B:commit.queued'],
  ['B:commit.done', 'B:commit.start'],
  ['B:inbox.durable', 'B:commit.done'],
  ['B:follow.page', 'B:inbox.durable'],
  ['B:follow.framed', 'B:follow.page'],
  ['B:follow.emit', 'B:inbox.durable'],
  ['C:event', 'B:follow.emit'],
  ['B:rx.ack', 'B:inbox.durable'],
  ['A:link.ack', 'B:rx.ack']
]

/** The index of the first mark of `stage` in `m` at or after `from` and before `until` (marks are in time order). */
function firstAfter (m: Marks, stage: string, from: bigint, until: bigint): number | undefined {
  let lo = 0
  let hi = m.at.length
  while (lo < hi) { const mid = (lo + hi) >> 1; if (m.at[mid] < from) lo = mid + 1; else hi = mid }
  for (let j = lo; j < m.at.length && m.at[j] < until; j++) if (m.stage[j] === stage) return j
  return undefined
}

interface Found { us: Array<number | undefined>, cpu: Array<number | undefined> }

/** Per stage of PATH, its offset (µs) from each sample's send call and the process CPU (µs) at it (undefined where not found). */
function offsets (starts: bigint[], sources: Map<string, Marks>): Map<string, Found> {
  const out = new Map<string, Found>(PATH.map(([name]) => [name, { us: [], cpu: [] }]))
  for (let i = 0; i < starts.length; i++) {
    const at = new Map<string, bigint>()
    const until = starts[i + 2] ?? starts[i] + 1_000_000_000n
    for (const [name, after] of PATH) {
      const [who, stage] = [name.slice(0, 1), name.slice(2)]
      const from = after === undefined ? starts[i] : at.get(after)
      const m = sources.get(who)
      const j = from === undefined || m === undefined ? undefined : firstAfter(m, stage, from, until)
      const f = out.get(name) as Found
      if (j === undefined || m === undefined) continue
      at.set(name, m.at[j])
      f.us[i] = Number(m.at[j] - starts[i]) / 1000
      f.cpu[i] = m.cpu[j]
    }
  }
  return out
}

async function once (n: number, root: string | undefined): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-t1-trace-'))
  const prefix = join(tmp, 'trace')
  process.env.AMESH_TRACE = prefix
  const ctx = toolContext(tmp)
  const pair = await startPair(root === undefined ? ctx : { ...ctx, root }, 't1tr')
  delete process.env.AMESH_TRACE
  // T1_WORKER_NICE=N (experiment): the daemons' V8 worker threads get nice N before the samples
  if (process.env.T1_WORKER_NICE !== undefined) {
    const workers = Number(/--v8-pool-size=(\d+)/.exec(process.env.AMESH_BENCH_NODE_ARGS ?? '')?.[1] ?? 4)
    for (const pid of [pair.a.pid, pair.b.pid]) for (const [tid, role] of await threadRoles(pid, workers)) {
      if (role !== 'v8-worker') continue
      // T1_WORKER_NICE=idle: the SCHED_IDLE policy (chrt -i), below every nice value
      if (process.env.T1_WORKER_NICE === 'idle') execFileSync('chrt', ['-i', '-p', '0', String(tid)])
      else setPriority(tid, Number(process.env.T1_WORKER_NICE))
    }
  }
  const starts: bigint[] = []
  const accepts: bigint[] = []
  const events: bigint[] = []
  let firstWall = 0
  /** thread id -> side and role, for T1_SCHED */
  const roles = new Map<number, string>()
  const niceOf = new Map<number, number>()
  try {
    await sendMany(pair.a.control, TX, RX, 20, 512, 1)
    const arrived = new Map<string, bigint>()
    let waiter: { id: string, resolve: (at: bigint) => void } | undefined
    const follow = await followInbox(pair.b, RX, await pair.b.inboxLast(RX), (e) => {
      const at = now()
      if (waiter !== undefined && waiter.id === e.id) { waiter.resolve(at); waiter = undefined } else arrived.set(e.id, at)
    })
    const one = async (i: number): Promise<[bigint, bigint, bigint]> => {
      const t0 = now()
      const r = await pair.a.control.call('send', { as: TX, to: RX, text: text(512, i) })
      const ta = now()
      const te = arrived.get(r.id) ?? await new Promise<bigint>((resolve) => { waiter = { id: r.id, resolve } })
      arrived.delete(r.id)
      return [t0, ta, te]
    }
    // T1_WARMUP=N: N unsampled sends first, as the bench's T1 (3,000) measures the steady state
    const warmup = Number(process.env.T1_WARMUP ?? 0)
    for (let i = 0; i < warmup; i++) await one(i)
    const perf: PerfRun | undefined = process.env.T1_PERF === undefined ? undefined : await startPerf([pair.a.pid, pair.b.pid], join(tmp, 'perf.data'))
    const sched = process.env.T1_SCHED === undefined ? undefined : await startSched(join(tmp, 'sched.data'))
    try {
      for (let i = 0; i < n; i++) {
        if (i === 0) firstWall = Date.now()
        const [t0, ta, te] = await one(warmup + i)
        starts.push(t0)
        accepts.push(ta)
        events.push(te)
      }
    } finally {
      follow.close()
      await perf?.stop()
      await sched?.stop()
    }
    // each daemon thread's nice value, for T1_PERF's per-thread lines
    if (perf !== undefined) {
      for (const pid of [pair.a.pid, pair.b.pid]) {
        for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
          const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '')
          if (stat !== '') niceOf.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]))
        }
      }
    }
    if (sched !== undefined) {
      const workers = (args: string): number => Number(/--v8-pool-size=(\d+)/.exec(args)?.[1] ?? 4)
      const daemonWorkers = workers(process.env.AMESH_BENCH_NODE_ARGS ?? '')
      for (const [who, pid, n] of [['A', pair.a.pid, daemonWorkers], ['B', pair.b.pid, daemonWorkers], ['C', process.pid, workers(process.execArgv.join(' '))]] as const) {
        for (const [tid, role] of await threadRoles(pid, n)) roles.set(tid, `${who} ${role}`)
      }
    }
  } finally {
    await pair.stop()
  }
  const a = await readMarks(`${prefix}.${pair.a.pid}`)
  const b = await readMarks(`${prefix}.${pair.b.pid}`)
  const perfSamples = process.env.T1_PERF === undefined ? undefined : await readPerf(join(tmp, 'perf.data'))
  const watched = new Set([...roles].filter(([, r]) => / (main|pool)$/.test(r) && !r.startsWith('C pool')).map(([tid]) => tid))
  const schedTrace = roles.size === 0 ? undefined : await readSched(join(tmp, 'sched.data'), watched)
  // T1_KEEP=1 keeps the hosts' homes (their LevelDB LOG lines, on the wall clock, beside `tail at:`)
  if (process.env.T1_KEEP === undefined) await rm(tmp, { recursive: true, force: true })
  else process.stdout.write(`  kept: ${tmp}, first send at ${new Date(firstWall).toISOString()}\n`)
  const client: Marks = { at: [], cpu: [], stage: [], gc: [] }
  for (let i = 0; i < starts.length; i++) {
    client.at.push(accepts[i], events[i])
    client.stage.push('reply', 'event')
  }
  const order = client.at.map((_, k) => k).sort((x, y) => (client.at[x] < client.at[y] ? -1 : 1))
  const sorted: Marks = { at: order.map((k) => client.at[k]), cpu: order.map(() => NaN), stage: order.map((k) => client.stage[k]), gc: [] }
  const table = offsets(starts, new Map([['A', a], ['B', b], ['C', sorted]]))
  const p = (xs: number[], q: number): string => xs.length === 0 ? '-' : percentile(xs, q).toFixed(0)
  process.stdout.write(`${root ?? 'this checkout'}: ${n} samples, 1-min load ${(await readFile('/proc/loadavg', 'utf8')).split(' ')[0]}\n`)
  process.stdout.write(`  ${'stage'.padEnd(18)} ${'at p50'.padStart(7)} ${'p90'.padStart(7)}   ${'step from'.padEnd(17)} ${'p50'.padStart(6)} ${'p90'.padStart(6)} ${'cpu p50'.padStart(8)} ${'mean'.padStart(6)}  (µs; cpu: the process's CPU over the step, same-process steps)\n`)
  for (const [name, after] of PATH) {
    const f = table.get(name) as Found
    const found = f.us.filter((x): x is number => x !== undefined)
    const base = after === undefined ? undefined : table.get(after)
    const steps: number[] = []
    const cpu: number[] = []
    const same = after !== undefined && after[0] === name[0] && name[0] !== 'C'
    f.us.forEach((x, i) => {
      const y = base === undefined ? 0 : base.us[i]
      if (x !== undefined && y !== undefined) steps.push(x - y)
      const c0 = base?.cpu[i]
      const c1 = f.cpu[i]
      if (same && c0 !== undefined && c1 !== undefined) cpu.push(c1 - c0)
    })
    const mean = cpu.length === 0 ? '-' : (cpu.reduce((s, x) => s + x, 0) / cpu.length).toFixed(0)
    process.stdout.write(`  ${name.padEnd(18)} ${p(found, 50).padStart(7)} ${p(found, 90).padStart(7)}   ${(after ?? 'send call').padEnd(17)} ${p(steps, 50).padStart(6)} ${p(steps, 90).padStart(6)} ${p(cpu, 50).padStart(8)} ${mean.padStart(6)}  (${found.length})\n`)
  }
  tail(table)
  tailTimes(table, starts)
  ackOverlap(table, starts, a)
  gcShare(table, starts, [['A', a], ['B', b]])
  if (perfSamples !== undefined) perfShare(table, starts, perfSamples, [['A', pair.a.pid], ['B', pair.b.pid]], niceOf)
  if (schedTrace !== undefined) schedShare(table, starts, schedTrace, roles)
}

/**
 * Per sample (send call -> follow event): how long the watched threads (the daemons' main and
 * pool threads, this client's main thread) waited for a CPU while runnable, and who ran on the
 * CPUs during those waits (µs per sample, the CPUs' time divided by their count): the daemons'
 * and the client's own threads by role, `idle` (a CPU was free: the wake-up itself), `other`
 * (processes outside the run). Mean over the samples past p99 and over all.
 */
function schedShare (table: Map<string, Found>, starts: bigint[], trace: SchedTrace, roles: Map<number, string>): void {
  const total = (table.get('C:event') as Found).us
  const found = total.filter((x): x is number => x !== undefined)
  if (found.length < 100) return
  const cut = percentile(found, 99)
  const waits = [...trace.waits].sort((x, y) => (x.from < y.from ? -1 : 1))
  const classOf = (tid: number): string => tid === 0 ? 'idle' : roles.get(tid) ?? 'other'
  const sum = (idx: number[]): { wait: number, by: Map<string, number> } => {
    const by = new Map<string, number>()
    let wait = 0
    for (const i of idx) {
      const from = starts[i]
      const to = from + BigInt(Math.round((total[i] as number) * 1000))
      for (const w of waits) {
        if (w.from >= to) break
        if (w.to <= from) continue
        const a = w.from > from ? w.from : from
        const b = w.to < to ? w.to : to
        wait += Number(b - a) / 1000
        whoRan(trace, a, b, classOf, by)
      }
    }
    for (const [k, v] of by) by.set(k, v / idx.length)
    return { wait: wait / idx.length, by }
  }
  const all = total.map((x, i) => (x === undefined ? -1 : i)).filter((i) => i >= 0)
  const slow = all.filter((i) => (total[i] as number) >= cut)
  for (const [label, idx] of [['past p99', slow], ['all', all]] as const) {
    const r = sum(idx)
    const parts = [...r.by].sort((x, y) => y[1] - x[1]).filter(([, v]) => v >= 1).map(([k, v]) => `${k} ${v.toFixed(0)}`)
    process.stdout.write(`  sched ${label} (${idx.length}): watched threads waited ${r.wait.toFixed(0)} µs per sample for a CPU; meanwhile ran: ${parts.join(', ')}\n`)
  }
}

/** Windows of a sample whose threads' CPU is split: [label, side, from stage (undefined: the send call), to stage]. */
const WINDOWS: Array<[string, string, string | undefined, string]> = [
  ['way in', 'A', undefined, 'A:ctl.in.send'],
  ['commit', 'A', 'A:commit.start', 'A:commit.done'],
  ['commit', 'B', 'B:commit.start', 'B:commit.done'],
  ['durable to event', 'B', 'B:inbox.durable', 'B:follow.emit'],
  ['page to framed', 'B', 'B:follow.page', 'B:follow.framed'],
  ['frame to commit', 'B', 'B:rx.frame', 'B:commit.start'],
  ['send to commit', 'A', 'A:ctl.in.send', 'A:commit.start'],
  ['sample', 'A', undefined, 'C:event'],
  ['sample', 'B', undefined, 'C:event']
]

/**
 * Per daemon and thread role (perf-threads.ts), the CPU µs (perf samples × PERIOD_US) in each
 * window of WINDOWS: mean over the samples past p99 and over all, and what the tail's CPU ran.
 */
function perfShare (table: Map<string, Found>, starts: bigint[], samples: PerfSample[], sides: Array<[string, number]>, niceOf: Map<number, number>): void {
  const total = (table.get('C:event') as Found).us
  const found = total.filter((x): x is number => x !== undefined)
  if (found.length < 100) return
  const cut = percentile(found, 99)
  const all = total.map((x, i) => (x === undefined ? -1 : i)).filter((i) => i >= 0)
  const slow = all.filter((i) => (total[i] as number) >= cut)
  const roles = new Map<number, string>()
  for (const [who, pid] of sides) {
    const mine = samples.filter((s) => s.pid === pid)
    const tids = [...new Set(mine.map((s) => s.tid))].sort((x, y) => x - y)
    for (const tid of tids) roles.set(tid, roleOf(tid, pid, mine.filter((s) => s.tid === tid)))
    const per = tids.map((tid) => { const t = mine.filter((s) => s.tid === tid); return `${tid} ${roles.get(tid) ?? '?'} (nice ${niceOf.get(tid) ?? '?'}) ${(t.length * PERIOD_US / starts.length).toFixed(0)} µs/packet [${topSymbols(t, 3)}]` })
    process.stdout.write(`  perf ${who} (pid ${pid}), threads over the samples:\n    ${per.join('\n    ')}\n`)
    const acts = new Map<string, number>()
    for (const x of mine) { const k = activityOf(x, roles.get(x.tid) ?? '?'); acts.set(k, (acts.get(k) ?? 0) + 1) }
    process.stdout.write(`  perf ${who} by activity, µs per packet: ${[...acts].sort().map(([k, c]) => `${k} ${(c * PERIOD_US / starts.length).toFixed(0)}`).join(', ')}\n`)
  }
  const at = (i: number, stage: string | undefined): bigint | undefined => {
    if (stage === undefined) return starts[i]
    const us = table.get(stage)?.us[i]
    return us === undefined ? undefined : starts[i] + BigInt(Math.round(us * 1000))
  }
  for (const [label, who, from, to] of WINDOWS) {
    const pid = (sides.find(([w]) => w === who) as [string, number])[1]
    const cpu = (idx: number[]): { byRole: Map<string, number>, tail: PerfSample[] } => {
      const byRole = new Map<string, number>()
      const tail: PerfSample[] = []
      let n = 0
      for (const i of idx) {
        const t0 = at(i, from)
        const t1 = at(i, to)
        if (t0 === undefined || t1 === undefined) continue
        n++
        for (const s of within(samples, pid, t0, t1)) { const r = activityOf(s, roles.get(s.tid) ?? '?'); byRole.set(r, (byRole.get(r) ?? 0) + PERIOD_US); tail.push(s) }
      }
      for (const [r, us] of byRole) byRole.set(r, us / Math.max(1, n))
      return { byRole, tail }
    }
    const s = cpu(slow)
    const m = cpu(all)
    const names = [...new Set([...s.byRole.keys(), ...m.byRole.keys()])].sort()
    const parts = names.map((r) => `${r} ${(s.byRole.get(r) ?? 0).toFixed(0)} (${(m.byRole.get(r) ?? 0).toFixed(0)})`)
    process.stdout.write(`  perf ${who} ${label} (${from ?? 'send call'} -> ${to}): cpu µs per sample past p99 (all): ${parts.join(', ')}\n`)
    for (const r of names) {
      const t = s.tail.filter((x) => activityOf(x, roles.get(x.tid) ?? '?') === r)
      if (t.length > 0) process.stdout.write(`      ${r} in the tail: ${topSymbols(t, 5)}\n`)
    }
    const main = m.tail.filter((x) => x.tid === pid)
    if (main.length > 0) process.stdout.write(`      main over all: ${topSymbols(main, 10)}\n`)
  }
}

/**
 * The slow tail: for the samples at or past the p99 of the whole path (send
 * call -> follow event), the mean of each step, beside the mean over all
 * samples: which step the tail is made of.
 */
function tail (table: Map<string, Found>): void {
  const total = (table.get('C:event') as Found).us
  const found = total.filter((x): x is number => x !== undefined)
  if (found.length < 100) return
  const cut = percentile(found, 99)
  const slow = total.map((x, i) => (x !== undefined && x >= cut ? i : -1)).filter((i) => i >= 0)
  process.stdout.write(`  tail: ${slow.length} samples at or past p99 ${cut.toFixed(0)} µs; mean step µs over them (over all), wall and the process's cpu:\n`)
  for (const [name, after] of PATH) {
    if (after === undefined) continue
    const f = table.get(name) as Found
    const base = table.get(after) as Found
    const step = (i: number): number | undefined => { const x = f.us[i]; const y = base.us[i]; return x === undefined || y === undefined ? undefined : x - y }
    const cpu = (i: number): number | undefined => { const x = f.cpu[i]; const y = base.cpu[i]; return x === undefined || y === undefined || name[0] !== after[0] || name[0] === 'C' ? undefined : x - y }
    const mean = (idx: number[], g: (i: number) => number | undefined): string => {
      const xs = idx.map(g).filter((x): x is number => x !== undefined)
      return xs.length === 0 ? '-' : (xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(0)
    }
    const all = total.map((_, i) => i)
    process.stdout.write(`    ${name.padEnd(18)} wall ${mean(slow, step).padStart(6)} (${mean(all, step).padStart(5)})  cpu ${mean(slow, cpu).padStart(6)} (${mean(all, cpu).padStart(5)})\n`)
  }
}

/**
 * Whether the sender is busy with the previous packet's ack when a send call comes: in how many
 * samples an ack reached A's link (its `link.ack` mark) between the send call and A's first mark
 * of the request (`ctl.in.send`), and where in that window. Read from A's marks directly (the
 * chain of stages can skip to a later packet's marks when a commit was already under way).
 */
function ackOverlap (table: Map<string, Found>, starts: bigint[], a: Marks): void {
  const way = (table.get('A:ctl.in.send') as Found).us
  const acks = a.at.filter((_, k) => a.stage[k] === 'link.ack')
  let inside = 0
  let n = 0
  const at: number[] = []
  for (let i = 0; i < starts.length; i++) {
    const us = way[i]
    if (us === undefined) continue
    n++
    const end = starts[i] + BigInt(Math.round(us * 1000))
    const hit = acks.find((t) => t >= starts[i] && t < end)
    if (hit !== undefined) { inside++; at.push(Number(hit - starts[i]) / 1000) }
  }
  if (n === 0) return
  const where = at.length === 0 ? '' : `, at p50 ${percentile(at, 50).toFixed(0)} µs after the call (the way in's p50 ${percentile(way.filter((x): x is number => x !== undefined), 50).toFixed(0)})`
  process.stdout.write(`  acks at A's link during the way in (send call -> A:ctl.in.send): ${inside} of ${n} samples${where}\n`)
}

/** When the tail samples came: their sample index and ms since the first send call (bursts vs isolated; periodic work shows as a fixed spacing). */
function tailTimes (table: Map<string, Found>, starts: bigint[]): void {
  const total = (table.get('C:event') as Found).us
  const found = total.filter((x): x is number => x !== undefined)
  if (found.length < 100) return
  const cut = percentile(found, 99)
  const at = total.map((x, i) => (x !== undefined && x >= cut ? `#${i}@${(Number(starts[i] - starts[0]) / 1e6).toFixed(0)}ms` : '')).filter((x) => x !== '')
  process.stdout.write(`  tail at: ${at.join(' ')}\n`)
}

/** How much of the samples' time the daemons spent in GC: all samples, and the tail past p99. */
function gcShare (table: Map<string, Found>, starts: bigint[], sides: Array<[string, Marks]>): void {
  const total = (table.get('C:event') as Found).us
  const found = total.filter((x): x is number => x !== undefined)
  if (found.length < 100) return
  const cut = percentile(found, 99)
  for (const [who, m] of sides) {
    const inGc = total.map((x, i) => {
      if (x === undefined) return undefined
      const end = starts[i] + BigInt(Math.round(x * 1000))
      let us = 0
      for (const [at, dur] of m.gc) if (at < end && at + BigInt(dur * 1000) > starts[i]) us += dur
      return us
    })
    const sum = (idx: number[]): number => idx.reduce((s, i) => s + (inGc[i] ?? 0), 0)
    const all = total.map((x, i) => (x === undefined ? -1 : i)).filter((i) => i >= 0)
    const slow = all.filter((i) => (total[i] as number) >= cut)
    const hit = slow.filter((i) => (inGc[i] ?? 0) > 0).length
    const kinds = new Map<string, { n: number, us: number, max: number }>()
    for (const [, dur, kind] of m.gc) { const k = kinds.get(kind) ?? { n: 0, us: 0, max: 0 }; k.n++; k.us += dur; k.max = Math.max(k.max, dur); kinds.set(kind, k) }
    const byKind = [...kinds].map(([k, v]) => `${k} ${v.n} (mean ${(v.us / v.n).toFixed(0)}, max ${v.max} µs)`).join(', ')
    // start-up excluded: the collections from the first sample's send call to the last one's event
    const first = starts[0]
    const last = starts[starts.length - 1] + BigInt(Math.round((total[total.length - 1] ?? 0) * 1000))
    const during = m.gc.filter(([at]) => at >= first && at <= last)
    const minor = during.filter(([, , kind]) => kind === 'minor').length
    process.stdout.write(`  gc ${who}: ${m.gc.length} collections (${byKind}); during the samples ${during.length} (${minor} minor: ${(minor * 1000 / starts.length).toFixed(1)} per 1,000 packets); in a sample's window: mean ${(sum(all) / all.length).toFixed(0)} µs over all, ${(sum(slow) / slow.length).toFixed(0)} µs over the ${slow.length} past p99 (${hit} of them overlap a GC)\n`)
  }
}

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 300)
  const roots = process.argv.length > 3 ? process.argv.slice(3) : [undefined]
  for (const root of roots) await once(n, root)
}

await main()
