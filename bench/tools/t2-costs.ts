// In-process costs of T2's per-packet steps that session 12 changed, this
// checkout against a base checkout (BASE: a built dist/), rounds alternated,
// CPU from process.cpuUsage, medians of 9 rounds:
//   node --import ./dist/src/polyfill.js dist/bench/tools/t2-costs.js BASE
// - decode: a 512 B packet decoded, its id used as a Map key (as the inbox does);
// - admit: a frame of 256 packets decoded and admitted, with admitNow and through admit alone;
// - client: ControlClient calls, 512 in flight, against a server that answers each line at once
//   (in this process too: its CPU is in both figures).
import { createServer, type Server } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { PacketReceiver } from '../../src/delivery/receiver.js'
import { encodePacket } from '../../src/packet/codec.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { ulid } from '../../src/util/ulid.js'
import type { Packet } from '../../src/packet/types.js'
import type { InboxStore } from '../../src/store/inbox.js'

interface Decoder { decode: (bytes: Uint8Array) => Packet | undefined }
interface DecoderModule { PacketDecoder: new () => Decoder }
interface Client { call: (method: string, params: object) => Promise<unknown>, close: () => void }
interface ClientModule { ControlClient: { connect: (path: string) => Promise<Client> } }
type Admitting = (packets: Uint8Array[], values: undefined, remote: string, blocked: Set<string>) => unknown

const ROUNDS = 9
const cpuUs = (): number => { const c = process.cpuUsage(); return c.user + c.system }
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function load<T> (root: string, file: string): Promise<T> {
  return await import(pathToFileURL(join(resolve(root), 'dist', file)).href) as T
}

function decodeRound (m: DecoderModule, frame: Uint8Array[], n: number): number {
  const d = new m.PacketDecoder()
  const seen = new Map<string, number>()
  const t = cpuUs()
  for (let i = 0; i < n; i++) {
    for (const b of frame) {
      const p = d.decode(b)
      if (p === undefined) throw new Error('not decoded')
      seen.set(p.id, 1)
      seen.get(p.id)
      seen.delete(p.id)
    }
  }
  return (cpuUs() - t) / (n * frame.length)
}

async function admitRound (admitAll: Admitting, frame: Uint8Array[], n: number): Promise<number> {
  const t = cpuUs()
  for (let i = 0; i < n; i++) {
    const slots = admitAll(frame, undefined, 'peer', new Set())
    if (slots instanceof Promise) await slots
  }
  return (cpuUs() - t) / (n * frame.length)
}

function echoServer (path: string): Promise<Server> {
  const server = createServer((s) => {
    let buf = ''
    s.setEncoding('utf8')
    s.on('data', (d: string) => {
      buf += d
      let out = ''
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const id = (JSON.parse(buf.slice(0, nl)) as { id: number }).id
        buf = buf.slice(nl + 1)
        out += `{"id":${id},"result":{"id":"01JE0000000000000000000000","state":"queued","receipt":"queued"}}\n`
      }
      if (out !== '') s.write(out)
    })
  })
  return new Promise((resolve) => server.listen(path, () => resolve(server)))
}

async function clientRound (c: Client, n: number): Promise<number> {
  let next = 0
  const lane = async (): Promise<void> => { while (next < n) { next++; await c.call('status', { n: next }) } }
  const t = cpuUs()
  await Promise.all(Array.from({ length: 512 }, lane))
  return (cpuUs() - t) / n
}

async function main (): Promise<void> {
  const base = process.argv[2]
  if (base === undefined) throw new Error('usage: t2-costs.js BASE_ROOT')
  const here = resolve(process.argv[1], '../../../..')
  const [a, b] = [generateNodeKey().id, generateNodeKey().id]
  const text = 'x'.repeat(512)
  const frame = Array.from({ length: 256 }, () => encodePacket({ id: ulid(), from: a, to: b, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text }, ts: Date.now() }))
  const decoders = { base: await load<DecoderModule>(base, 'src/packet/decode-fast.js'), branch: await load<DecoderModule>(here, 'src/packet/decode-fast.js') }
  const inbox = undefined as unknown as InboxStore // admission only: nothing is appended
  const withNow = new PacketReceiver({ inbox, admit: async () => null, admitNow: () => null, log: () => {} })
  const alone = new PacketReceiver({ inbox, admit: async () => null, log: () => {} })
  const admitting = (r: PacketReceiver): Admitting => (r as unknown as { admitAll: Admitting }).admitAll.bind(r)
  const dir = mkdtempSync(join(tmpdir(), 'amesh-t2-costs-'))
  const server = await echoServer(join(dir, 'sock'))
  const clients = {
    base: await (await load<ClientModule>(base, 'src/control/client.js')).ControlClient.connect(join(dir, 'sock')),
    branch: await (await load<ClientModule>(here, 'src/control/client.js')).ControlClient.connect(join(dir, 'sock'))
  }
  const r: Record<string, number[]> = { 'decode base': [], 'decode branch': [], 'admit (admit alone)': [], 'admit (admitNow)': [], 'client call base': [], 'client call branch': [] }
  try {
    for (let i = 0; i < ROUNDS; i++) {
      r['decode base'].push(decodeRound(decoders.base, frame, 100))
      r['decode branch'].push(decodeRound(decoders.branch, frame, 100))
      r['admit (admit alone)'].push(await admitRound(admitting(alone), frame, 200))
      r['admit (admitNow)'].push(await admitRound(admitting(withNow), frame, 200))
      r['client call base'].push(await clientRound(clients.base, 20_000))
      r['client call branch'].push(await clientRound(clients.branch, 20_000))
    }
  } finally {
    clients.base.close()
    clients.branch.close()
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
  for (const [name, xs] of Object.entries(r)) {
    process.stdout.write(`${name.padEnd(22)} median ${median(xs).toFixed(3)} µs per packet (${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})\n`)
  }
}

await main()
