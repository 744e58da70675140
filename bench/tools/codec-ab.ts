// The per-packet steps of the send path that run in one call, for builds
// from different checkouts, interleaved in one process (round by round, so
// drift on a shared machine hits every build alike): the canonical encode of
// a T2 packet (512 B text, a grant), the packet codec's encode (validate +
// encode), its encodeAfter (what the send path calls) and decode, and a ULID.
// Prints the median process CPU µs per call.
//   node --import ./dist/src/polyfill.js dist/bench/tools/codec-ab.js ROUNDS ROOT...
// ROOT is a checkout with a built dist/ (e.g. a worktree of the base commit).
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Packet } from '../../src/packet/types.js'
import { generateNodeKey } from '../../src/identity/node-key.js'

type Canonical = typeof import('../../src/packet/canonical.js')
type Codec = typeof import('../../src/packet/codec.js')
type Ulid = typeof import('../../src/util/ulid.js')

const CALLS = 20_000

interface Build { root: string, steps: Record<string, () => unknown>, cpu: Record<string, number[]> }

async function load<T> (root: string, file: string): Promise<T> {
  return await import(pathToFileURL(join(root, 'dist', 'src', file)).href) as T
}

async function build (root: string, packet: Packet): Promise<Build> {
  const { CanonicalEncoder } = await load<Canonical>(root, 'packet/canonical.js')
  const { PacketCodec } = await load<Codec>(root, 'packet/codec.js')
  const { ulid } = await load<Ulid>(root, 'util/ulid.js')
  const encoder = new CanonicalEncoder()
  const codec = new PacketCodec()
  const bytes = codec.encode(packet)
  return {
    root,
    steps: {
      'canonical encode': () => encoder.encode(packet),
      'codec encode (validate + encode)': () => codec.encode(packet),
      // what the send path calls: after the outbox value's header (~90 bytes for two did:key ids and a ULID)
      'codec encodeAfter': () => codec.encodeAfter(90, packet),
      'codec decode': () => codec.decode(bytes),
      ulid: () => ulid()
    },
    cpu: {}
  }
}

function cpuPerCall (body: () => unknown): number {
  const c0 = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) body()
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / CALLS
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main (): Promise<void> {
  const rounds = Number(process.argv[2] ?? 11)
  const roots = process.argv.slice(3)
  const packet: Packet = {
    id: '01KBXRKZ8Q2D0N9W4Y7C3M5T6H',
    from: generateNodeKey().id,
    to: generateNodeKey().id,
    from_name: 'bench-a',
    to_name: 'bench-b',
    signal: 'MESSAGE',
    scope: { files: [], zone: 'project' },
    payload: { text: 'x'.repeat(512) },
    ts: Date.now(),
    proof: { grants: [new Uint8Array(380).fill(7)] }
  }
  const builds = await Promise.all(roots.map(async (r) => await build(r, packet)))
  for (let r = 0; r < rounds; r++) {
    for (const b of builds) {
      for (const [name, body] of Object.entries(b.steps)) (b.cpu[name] ??= []).push(cpuPerCall(body))
    }
  }
  for (const b of builds) {
    const figures = Object.entries(b.cpu).map(([name, xs]) => `${name} ${median(xs).toFixed(2)}`).join(' · ')
    process.stdout.write(`${b.root.padEnd(24)} ${figures} us (median of ${rounds} x ${CALLS})\n`)
  }
}

await main()
