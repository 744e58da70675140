// A2A: an A2A 1.0 SendMessage (JSONRPC, returnImmediately) through the host's
// A2A face → the packet durable in the node's inbox (the face answers once the
// local `send` is durable), 64 concurrent clients, p50 and msgs/s. Beside it in
// the same run, B_http: a raw node:http server answering the same request at
// once, driven the same way. Target: A2A p50 ≤ 2 × (B_http p50 + B_fsync p50).
// The raw server runs in its own process (bench/workers/http-answer.ts), as the
// face runs in the daemon's: in the bench's own process it shared one event
// loop with the 64 clients, which made B_http slower than a raw round trip is
// (B_http.same_process shows that method, for comparison only). CPU µs per
// request of each process are reported: steadier than p50 on a loaded machine.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpuFigures, startCpu, type CpuPerItem } from '../lib/cpu.js'
import { Daemon } from '../lib/daemon.js'
import { numField, spawnWorker, workerScript, type Worker } from '../lib/proc.js'
import { nowMs, p50, p99, perSecond, sig } from '../lib/stats.js'
import type { BenchContext, Figure, Measurement } from '../lib/types.js'

const CLIENTS = 64

function body (i: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id: i, method: 'SendMessage', params: { message: { messageId: `bench-${i}`, role: 'ROLE_USER', parts: [{ text: `a2a bench message ${i}`.padEnd(512, '.') }] }, configuration: { returnImmediately: true } } })
}

/** `total` requests from CLIENTS concurrent loops; per-request latency (ms) and elapsed time. */
async function drive (url: string, headers: Record<string, string>, total: number): Promise<{ samples: number[], elapsed: number }> {
  const samples: number[] = []
  let next = 0
  const loop = async (): Promise<void> => {
    while (next < total) {
      const i = next++
      const t0 = nowMs()
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers }, body: body(i) })
      const json = await res.json() as { error?: unknown }
      if (res.status !== 200 || json.error !== undefined) throw new Error(`request ${i}: ${res.status} ${JSON.stringify(json)}`)
      samples.push(nowMs() - t0)
    }
  }
  const start = nowMs()
  await Promise.all(Array.from({ length: CLIENTS }, loop))
  return { samples, elapsed: nowMs() - start }
}

/** drive() with CPU µs per request of the client (this process) and of the server process. */
async function measured (url: string, headers: Record<string, string>, total: number, server: { label: string, pid: number }): Promise<{ samples: number[], elapsed: number, cpu: CpuPerItem }> {
  const stop = await startCpu([server])
  const r = await drive(url, headers, total)
  return { ...r, cpu: await stop(r.samples.length) }
}

/** The raw server in its own process. */
async function rawWorker (): Promise<{ worker: Worker, url: string }> {
  const worker = spawnWorker(workerScript('http-answer'))
  const ready = await worker.next('ready')
  return { worker, url: `http://127.0.0.1:${numField(ready, 'port')}/` }
}

/** The earlier method: the raw server in this process, beside the clients (comparison only). */
async function rawServer (): Promise<{ server: Server, url: string }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => { res.setHeader('Content-Type', 'application/json'); res.end('{"jsonrpc":"2.0","id":1,"result":{}}') })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }
}

async function faceOf (d: Daemon): Promise<{ url: string, secret: string }> {
  await d.ensureNode('lead')
  const g = await d.control.call('a2a.client.grant', { as: 'lead', name: 'bench-client' })
  for (let i = 0; i < 200; i++) {
    const info = await d.control.call('a2a.info')
    if (info.base_url !== null) return { url: `${info.base_url}/nodes/lead/jsonrpc`, secret: g.secret }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('the A2A face did not start')
}

function figures (name: string, r: { samples: number[], elapsed: number }, extra: Partial<Figure> = {}): Figure[] {
  return [
    { name: `${name}.p50`, value: sig(p50(r.samples)), unit: 'ms', better: 'lower', ...extra },
    { name: `${name}.p99`, value: sig(p99(r.samples)), unit: 'ms', better: 'lower' },
    { name: `${name}.msgs_per_s`, value: sig(perSecond(r.samples.length, r.elapsed)), unit: 'msg/s', better: 'higher' }
  ]
}

async function run (ctx: BenchContext): Promise<Figure[]> {
  const total = ctx.count(4000, 640)
  const raw = await rawWorker()
  const same = await rawServer()
  const d = await Daemon.start(ctx, 'a2a', { config: ['a2a: {listen: "127.0.0.1:0", rate_per_minute: 0}'] })
  try {
    const face = await faceOf(d)
    const auth = { Authorization: `Bearer ${face.secret}` }
    await drive(face.url, auth, CLIENTS) // warm-up: connections, caches
    await drive(raw.url, {}, CLIENTS)
    await drive(same.url, {}, CLIENTS)
    const base = await measured(raw.url, {}, total, { label: 'server', pid: raw.worker.pid })
    const a2a = await measured(face.url, auth, total, { label: 'daemon', pid: d.pid })
    const inproc = await drive(same.url, {}, total)
    const note = `${CLIENTS} concurrent clients, ${total} SendMessage (512 B text, returnImmediately) each`
    return [
      ...figures('A2A', a2a, { baseline: 'B_http.p50+B_fsync.p50', maxRatio: 2, note }),
      ...cpuFigures('A2A', a2a.cpu, 'msg', 'A2A'),
      ...figures('B_http', base, { note: 'raw node:http server in its own process answering at once, same clients' }),
      ...cpuFigures('B_http', base.cpu, 'msg', 'B_http'),
      ...figures('B_http.same_process', inproc, { note: 'the earlier method, for comparison: the raw server in the clients\' process' })
    ]
  } finally {
    same.server.close()
    await raw.worker.stop()
    await d.stop()
  }
}

export const a2a: Measurement = { name: 'A2A', description: 'A2A SendMessage -> packet durable in the inbox, 64 concurrent clients, beside raw HTTP', baselines: ['B_fsync'], run }
