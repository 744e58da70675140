// Summarise a V8 .cpuprofile (from `node --cpu-prof`, e.g. daemons run with
// AMESH_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"):
//   node dist/bench/tools/cpuprofile.js FILE [--top N] [--skip-ms MS] [--until-ms MS] [--callers TEXT [--depth D]]
// Prints self time by function and by package/file, and inclusive time of
// the top functions. --skip-ms drops the first MS of samples (start-up).
// --callers: also the self time of the functions whose label contains TEXT,
// split by their D (default 3) nearest callers.
import { readFileSync } from 'node:fs'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }

function where (cf: CallFrame): string {
  const url = cf.url.replace(/^file:\/\//, '')
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  const dist = url.indexOf('/dist/')
  if (dist >= 0) return url.slice(dist + 6)
  return url === '' ? '(native)' : url.startsWith('node:') ? url : url.split('/').slice(-2).join('/')
}

function label (cf: CallFrame): string {
  return `${cf.functionName === '' ? '(anonymous)' : cf.functionName} ${where(cf)}:${cf.lineNumber + 1}`
}

function main (): void {
  const args = process.argv.slice(2)
  const file = args[0]
  const top = Number(args[args.indexOf('--top') + 1] ?? 25) || 25
  const skip = args.includes('--skip-ms') ? Number(args[args.indexOf('--skip-ms') + 1]) : 0
  const until = args.includes('--until-ms') ? Number(args[args.indexOf('--until-ms') + 1]) : Number.POSITIVE_INFINITY
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const self = new Map<string, number>()
  const pkg = new Map<string, number>()
  const incl = new Map<string, number>()
  const callers = args.includes('--callers') ? args[args.indexOf('--callers') + 1] : undefined
  const depth = args.includes('--depth') ? Number(args[args.indexOf('--depth') + 1]) : 3
  const stacks = new Map<string, number>()
  let t = 0
  let total = 0
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i] ?? 0) / 1000
    t += dt
    if (t < skip || t > until) continue
    const node = byId.get(p.samples[i])
    if (node === undefined) continue
    const cf = node.callFrame
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue
    total += dt
    self.set(label(cf), (self.get(label(cf)) ?? 0) + dt)
    pkg.set(where(cf), (pkg.get(where(cf)) ?? 0) + dt)
    if (callers !== undefined && label(cf).includes(callers)) {
      const chain: string[] = []
      for (let id = parent.get(node.id); id !== undefined && chain.length < depth; id = parent.get(id)) chain.push(label((byId.get(id) as ProfileNode).callFrame))
      const k = `${label(cf)} <- ${chain.join(' <- ')}`
      stacks.set(k, (stacks.get(k) ?? 0) + dt)
    }
    const seen = new Set<string>()
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const l = label((byId.get(id) as ProfileNode).callFrame)
      if (seen.has(l)) continue
      seen.add(l)
      incl.set(l, (incl.get(l) ?? 0) + dt)
    }
  }
  const show = (title: string, m: Map<string, number>): void => {
    process.stdout.write(`\n${title}\n`)
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`${v.toFixed(0).padStart(8)} ms ${(100 * v / total).toFixed(1).padStart(5)}%  ${k}\n`)
    }
  }
  process.stdout.write(`${file}: ${total.toFixed(0)} ms busy (of ${((p.endTime - p.startTime) / 1000).toFixed(0)} ms profiled, first ${skip} ms skipped)\n`)
  show('self time by package / file', pkg)
  show('self time by function', self)
  show('inclusive time by function', incl)
  if (callers !== undefined) show(`self time of "${callers}" by caller`, stacks)
}

main()
