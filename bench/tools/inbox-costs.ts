// CPU per packet of a receiving inbox's store path in one process, all
// threads (process.cpuUsage: the main thread, libuv's pool writing the
// batches, LevelDB's flushes and compactions): T2's receiver appends, frames
// of 256 packets of 1,102 B (a 512 B text with its grant chain, as T2's),
// two frames in flight, `batch` durability, over a real LevelDB; the CPU is
// taken over the appends and a settle of 2 s after them (compactions), and
// the main thread's alone (/proc/self/task/<pid>/stat, 10 ms ticks).
// With ROOTs (checkouts with a built dist/), their InboxStore as is, rounds
// alternated; without, this checkout's under variants that rewrite the ops
// the inbox hands the group commit, so what each store record costs can be
// told apart (none of them is a valid store):
//   node --import ./dist/src/polyfill.js dist/bench/tools/inbox-costs.js [N] [ROUNDS] [ROOT...]
// - as is: every op as the inbox writes it;
// - no ids: the dedup records (`i~<id>`) left out (what a store without them would save);
// - short ids, 11 B ids, binary ids: each dedup value cut to 8, 11 or 63 bytes (binary values of
//   its seq and a node number, or of its seq and node id);
// - d! ids: the dedup keys under `d!`, before the inbox's in key order (the layout before session 15);
// - q! ids, i" desc ids: the dedup keys under other prefixes after the inbox's (ascending; newest first).
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as dbHere from '../../src/store/db.js'
import * as inboxHere from '../../src/store/inbox.js'
import { Bucket } from '../../src/store/schema.js'
import type { BatchTarget, WriteOp } from '../../src/store/db.js'
import { ulid } from '../../src/util/ulid.js'

interface Build { db: typeof dbHere, inbox: typeof inboxHere }
async function load (root: string): Promise<Build> {
  const at = (file: string): string => pathToFileURL(join(resolve(root), 'dist', file)).href
  return { db: await import(at('src/store/db.js')) as typeof dbHere, inbox: await import(at('src/store/inbox.js')) as typeof inboxHere }
}
/** CPU µs of this process's main thread so far */
async function mainUs (): Promise<number> {
  const f = (await readFile(`/proc/self/task/${process.pid}/stat`, 'utf8')).split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10_000
}

type Variant = (ops: WriteOp[]) => WriteOp[]
const SHORT = new Uint8Array(8)
const ID = Bucket.dedup
const isId = (op: WriteOp): boolean => op.key.startsWith(ID)
const VARIANTS: Record<string, Variant> = {
  'as is': (ops) => ops,
  'no ids': (ops) => ops.filter((op) => !isId(op)),
  'short ids': (ops) => ops.map((op) => op.type === 'put' && isId(op) ? { ...op, value: SHORT } : op),
  '11 B ids': (ops) => ops.map((op) => op.type === 'put' && isId(op) ? { ...op, value: op.value.subarray(0, 11) } : op),
  'binary ids': (ops) => ops.map((op) => op.type === 'put' && isId(op) ? { ...op, value: op.value.subarray(0, 63) } : op),
  'd! ids': (ops) => ops.map((op) => isId(op) ? { ...op, key: 'd!' + op.key.slice(ID.length) } : op),
  'q! ids': (ops) => ops.map((op) => isId(op) ? { ...op, key: 'q!' + op.key.slice(ID.length) } : op),
  'i" desc ids': (ops) => ops.map((op) => isId(op) ? { ...op, key: 'i"' + invert(op.key.slice(ID.length)) } : op)
}
const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const invert = (id: string): string => { let o = ''; for (const c of id) o += ULID_ALPHABET[31 - ULID_ALPHABET.indexOf(c)]; return o }
const NODE = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'
const PACKET_BYTES = 1102
const FRAME = 256
const cpuUs = (): number => { const c = process.cpuUsage(); return c.user + c.system }

/** MB LevelDB wrote in compactions (its `leveldb.stats`, summed over the levels) */
function compactedMb (db: dbHere.RawDb): number {
  const stats = (db as unknown as { getProperty: (p: string) => string }).getProperty('leveldb.stats')
  let mb = 0
  for (const line of stats.split('\n')) {
    const f = line.trim().split(/\s+/)
    if (/^\d+$/.test(f[0] ?? '') && f.length >= 6) mb += Number(f[5])
  }
  return mb
}

async function round (b: Build, dir: string, n: number, variant: Variant): Promise<[number, number, number]> {
  const db = await b.db.openDb(dir)
  try {
    const real = b.db.batchTarget(db)
    const target: BatchTarget = { batch: async (ops, options) => { await real.batch(variant(ops), options) } }
    const inbox = new b.inbox.InboxStore(db, new b.db.Committer(target, 'batch'), 10_000_000)
    const packet = Buffer.alloc(PACKET_BYTES, 'abcdefghijklmnopqrstuvwxyz0123456789')
    const m0 = await mainUs()
    const t0 = cpuUs()
    let inFlight: Array<Promise<unknown>> = []
    for (let sent = 0; sent < n; sent += FRAME) {
      const items = Array.from({ length: Math.min(FRAME, n - sent) }, () => ({ nodeId: NODE, packetId: ulid(), packet }))
      inFlight.push(inbox.append(items))
      if (inFlight.length >= 2) { await inFlight[0]; inFlight = inFlight.slice(1) }
    }
    await Promise.all(inFlight)
    const main = (await mainUs() - m0) / n
    await new Promise((resolve) => setTimeout(resolve, 2000))
    return [(cpuUs() - t0) / n, main, compactedMb(db)]
  } finally {
    await db.close()
  }
}

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 30_000)
  const rounds = Number(process.argv[3] ?? 3)
  const roots = process.argv.slice(4)
  const runs: Array<{ name: string, build: Build, variant: Variant }> = roots.length > 0
    ? await Promise.all(roots.map(async (root) => ({ name: root, build: await load(root), variant: VARIANTS['as is'] })))
    : Object.entries(VARIANTS).map(([name, variant]) => ({ name, build: { db: dbHere, inbox: inboxHere }, variant }))
  const tmp = await mkdtemp(join(tmpdir(), 'amesh-inbox-costs-'))
  try {
    const results = new Map<string, Array<[number, number, number]>>()
    for (let r = 0; r < rounds; r++) {
      for (const [k, run] of runs.entries()) {
        const us = await round(run.build, join(tmp, `${k}-${r}`), n, run.variant)
        results.set(run.name, [...(results.get(run.name) ?? []), us])
      }
    }
    for (const [name, us] of results) {
      process.stdout.write(`${name.padEnd(22)} all threads ${us.map((u) => u[0].toFixed(1)).join(' ')} | main ${us.map((u) => u[1].toFixed(1)).join(' ')} µs per packet | compactions wrote ${us.map((u) => u[2].toFixed(0)).join(' ')} MB\n`)
    }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
