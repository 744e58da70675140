// The sender's ack batch alone, in one process: OutboxStore.remove of 128
// entries at a time with no receipt record, with the per-id `delivered`
// records (the reference path) and with one batch record (what the daemon
// writes), alternated; process CPU µs per packet, user + system:
//   node --import ./dist/src/polyfill.js dist/bench/tools/ack-batch-ab.js [ROUNDS]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type WriteOp } from '../../src/store/db.js'
import { OutboxStore, type OutboxEntry } from '../../src/store/outbox.js'
import { deliveredOps, stateOp, type SentMeta } from '../../src/store/receipts.js'
import { MINUTE } from '../../src/util/time.js'
import { ulid } from '../../src/util/ulid.js'

const PACKETS = 20_480
const ACK = 128
const PACKET_BYTES = 600
const META: SentMeta = { to: 'did:key:z6MkTo'.padEnd(56, '0'), from: 'did:key:z6MkFrom'.padEnd(56, '0'), dest: '12D3KooWLaX8H1y5hV1RjXy6oP4mZ6Y8k4Ff1eXgXz7Q8q9pLmNo', q: Date.now() }
type Mode = 'none' | 'per-id' | 'batch'

const extraOf: Record<Mode, ((live: OutboxEntry[]) => WriteOp[]) | undefined> = {
  none: undefined,
  'per-id': (live) => { const at = Date.now(); return live.map((e) => stateOp({ id: e.packetId, state: 'delivered', at, meta: { ...META } })) },
  batch: (live) => deliveredOps(live.map((e) => ({ id: e.packetId, meta: { ...META } })), Date.now())
}

async function once (mode: Mode): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'amesh-ack-ab-'))
  const db = await openDb(join(dir, 'store'))
  try {
    const committer = new Committer(batchTarget(db), 'batch')
    const outbox = new OutboxStore(db, committer, PACKETS * 2)
    await outbox.load()
    const entries: OutboxEntry[] = []
    const packet = new Uint8Array(PACKET_BYTES)
    for (let i = 0; i < PACKETS; i++) {
      const { ops, entry } = outbox.stage(META.dest, ulid(), META.to, 'bob', META.from, Date.now() + MINUTE, packet)
      entries.push(entry)
      await committer.writeUnsynced(ops)
    }
    const extra = extraOf[mode]
    const start = process.cpuUsage()
    for (let i = 0; i < PACKETS; i += ACK) await outbox.remove(entries.slice(i, i + ACK), extra === undefined ? {} : { extra })
    const used = process.cpuUsage(start)
    return (used.user + used.system) / PACKETS
  } finally {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
}

const rounds = Number(process.argv[2] ?? 5)
const modes: Mode[] = ['none', 'per-id', 'batch']
const out = new Map<Mode, string[]>(modes.map((m) => [m, []]))
for (let r = 0; r < rounds; r++) for (const m of modes) out.get(m)?.push((await once(m)).toFixed(1))
for (const [m, v] of out) process.stdout.write(`${m.padEnd(7)} ${v.join(' ')} µs/packet\n`)
