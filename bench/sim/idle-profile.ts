// `node --expose-gc --import ./dist/src/polyfill.js dist/bench/sim/idle-profile.js N SETTLE_S SAMPLE_S [OUT]`:
// what idle simulated hosts spend their CPU on. Forms N hosts (bench/sim/net.ts),
// waits SETTLE_S seconds, then profiles SAMPLE_S seconds of the idle net with
// the inspector and prints the CPU per host and the top self-time functions
// (file:function), and the top files. OUT: the .cpuprofile (optional).
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Connection } from '@libp2p/interface'
import { SimNet, sleep } from './net.js'

interface Node { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
interface Profile { nodes: Node[], samples: number[], timeDeltas: number[] }

function short (url: string): string {
  const m = /node_modules\/(.*)$/.exec(url)
  if (m !== null) return m[1].replace(/\/dist\/src\//, '/')
  return url.replace(/^.*\/dist\//, '')
}

/** Time with each key anywhere on the stack (inclusive), ms: what a timer's callback costs with all it calls. */
function inclusive (p: Profile, key: (n: Node) => string, k: number): Array<[string, number]> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const ms = new Map<string, number>()
  p.samples.forEach((id, i) => {
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)
      if (n !== undefined) seen.add(key(n))
    }
    for (const name of seen) ms.set(name, (ms.get(name) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000)
  })
  return [...ms.entries()].sort((a, b) => b[1] - a[1]).slice(0, k)
}

function top (p: Profile, key: (n: Node) => string, k: number): Array<[string, number]> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const ms = new Map<string, number>()
  p.samples.forEach((id, i) => {
    const n = byId.get(id)
    if (n === undefined) return
    const name = key(n)
    ms.set(name, (ms.get(name) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000)
  })
  return [...ms.entries()].sort((a, b) => b[1] - a[1]).slice(0, k)
}

/** The first two amesh frames of the current stack. */
function caller (): string {
  const lines = (new Error().stack ?? '').split('\n').filter((l) => l.includes('/dist/src/'))
  return lines.slice(0, 3).map((l) => l.trim().replace(/^at /, '').replace(/\(.*\/dist\/src\//, '(')).join(' < ')
}

/** Function names of the stack below the caller's caller (who asked for a stream). */
function callers (): string {
  const lines = (new Error().stack ?? '').split('\n').slice(3, 12)
  return lines.map((l) => /at (?:async )?([^ ]+) /.exec(l.trim())?.[1] ?? '').filter((f) => f !== '' && !f.startsWith('Object.') && !f.includes('newStream')).slice(0, 4).join(' < ')
}

function stackTop (): string {
  const lines = (new Error().stack ?? '').split('\n').slice(3, 8)
  return lines.map((l) => l.trim().replace(/^at /, '').replace(/\(.*node_modules\//, '(').replace(/\/dist\/src\//, '/')).join(' < ')
}

/** Count connections opened, outbound streams per protocol and gossip messages per topic on every host. */
function watch (net: SimNet): Map<string, number> {
  const counts = new Map<string, number>()
  const bump = (k: string): void => { counts.set(k, (counts.get(k) ?? 0) + 1) }
  const patched = new WeakSet<object>()
  const patch = (c: Connection): void => {
    if (patched.has(c)) return
    patched.add(c)
    const orig = c.newStream.bind(c)
    const close = c.close.bind(c)
    const abort = c.abort.bind(c)
    c.close = async (o) => { bump(`conn.close by ${stackTop()}`); await close(o) }
    c.abort = (e) => { bump(`conn.abort (${e?.name}: ${e?.message?.slice(0, 40)}) by ${stackTop()}`); abort(e) }
    c.newStream = async (protocols, options) => { bump(`stream ${String(Array.isArray(protocols) ? protocols[0] : protocols)} by ${callers()}`); return await orig(protocols, options) }
  }
  for (const h of net.hosts) {
    const p2p = h.running.libp2p
    for (const c of p2p.getConnections()) patch(c)
    p2p.addEventListener('connection:open', (e) => { bump(`connection:open ${e.detail.direction}`); patch(e.detail) })
    p2p.addEventListener('connection:close', () => { bump('connection:close') })
    p2p.addEventListener('peer:identify', () => { bump('peer:identify') })
    const ps = (p2p.services as { pubsub?: { addEventListener: (t: string, f: (e: CustomEvent<{ msg: { topic: string } }>) => void) => void } }).pubsub
    const pub = (p2p.services as { pubsub?: { publish: (t: string, d: Uint8Array) => Promise<unknown> } }).pubsub
    if (pub !== undefined) {
      const orig = pub.publish.bind(pub)
      pub.publish = async (t, d) => { bump(`publish ${t} from ${caller()}`); return await orig(t, d) }
    }
    p2p.addEventListener('connection:close', (e) => { bump(`close ${e.detail.direction} ${e.detail.streams.length} streams, lived ${Math.round((Date.now() - e.detail.timeline.open) / 1000)} s`) })
    ps?.addEventListener('gossipsub:message', (e) => { bump(`gossip message ${e.detail.msg.topic}`) })
  }
  return counts
}

async function main (): Promise<void> {
  const [n, settle, sample] = process.argv.slice(2, 5).map(Number)
  const out = process.argv[5]
  const net = new SimNet({ latency: 0 })
  await net.grow(n)
  await net.waitJoined(120_000)
  await sleep(settle * 1000)
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 500 })
  const conns = net.hosts.map((h) => h.running.libp2p.getConnections().length)
  const peers = net.hosts.map((h) => h.running.libp2p.getPeers().length)
  const tables = net.tableSizes()
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)
  process.stdout.write(`per host at the sample's start: connections ${(sum(conns) / n).toFixed(1)} (max ${Math.max(...conns)}), peers ${(sum(peers) / n).toFixed(1)}, routing table ${(sum(tables) / n).toFixed(1)}\n`)
  const counts = watch(net)
  const lag = monitorEventLoopDelay({ resolution: 20 })
  lag.enable()
  const c0 = process.cpuUsage()
  await session.post('Profiler.start')
  await sleep(sample * 1000)
  // the CPU is read before the profile is stopped: building the profile took seconds of CPU itself
  const c1 = process.cpuUsage(c0)
  const { profile } = await session.post('Profiler.stop') as { profile: Profile }
  lag.disable()
  process.stdout.write(`event-loop delay: p50 ${(lag.percentile(50) / 1e6).toFixed(0)} ms, p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms, max ${(lag.max / 1e6).toFixed(0)} ms\n`)
  const cpuMs = (c1.user + c1.system) / 1000
  process.stdout.write(`${n} hosts idle ${sample} s: ${Math.round(cpuMs)} ms CPU, ${(100 * cpuMs / (sample * 1000) / n).toFixed(3)} % of a core per host\n`)
  const total = profile.timeDeltas.reduce((a, b) => a + b, 0) / 1000
  const pr = (rows: Array<[string, number]>): void => { for (const [name, ms] of rows) process.stdout.write(`  ${(100 * ms / total).toFixed(1).padStart(5)} %  ${name}\n`) }
  process.stdout.write('top files (self time):\n')
  pr(top(profile, (x) => short(x.callFrame.url) || `(${x.callFrame.functionName})`, 25))
  process.stdout.write('top functions (self time):\n')
  pr(top(profile, (x) => `${x.callFrame.functionName || '(anon)'} ${short(x.callFrame.url)}:${x.callFrame.lineNumber}`, 30))
  process.stdout.write('top functions (total time, with what they call):\n')
  pr(inclusive(profile, (x) => `${x.callFrame.functionName || '(anon)'} ${short(x.callFrame.url)}:${x.callFrame.lineNumber}`, 60))
  process.stdout.write('events during the sample (all hosts):\n')
  for (const [k, v] of [...counts.entries()].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${String(v).padStart(7)}  ${k}\n`)
  if (out !== undefined) writeFileSync(out, JSON.stringify(profile))
  await net.stop()
  process.exit(0)
}

main().catch((err) => { process.stderr.write(`${String(err?.stack ?? err)}\n`); process.exit(1) })
