// CPU per packet of the outbox's own work, in one process, real LevelDB:
// stage + group commit (synced) of W sends, then their removal on ack in
// frames of F (unsynced, as the link's delivered event does), W in flight as
// T2 keeps them. process.cpuUsage() counts every thread (LevelDB's too).
//   node --import ./dist/src/polyfill.js dist/bench/tools/outbox-costs.js [COUNT] [ROUNDS]
// OC_NOINDEX=1 drops the expiry-index ops (2 of the 4 per packet) from what is
// written: a bound on what moving that index elsewhere could save (not a valid store).
// OC_RECEIPTS=1: each removal also writes the delivered batch record, as the daemon's does.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { batchTarget, Committer, openDb } from '../../src/store/db.js'
import { OutboxStore, type OutboxEntry } from '../../src/store/outbox.js'
import { ulid } from '../../src/util/ulid.js'
import { deliveredOps } from '../../src/store/receipts.js'

const WINDOW = 512
const FRAME = 256

async function round (count: number): Promise<{ main: number, all: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'amesh-outbox-costs-'))
  const db = await openDb(join(dir, 'db'))
  try {
    const c = new Committer(batchTarget(db), 'batch')
    const outbox = new OutboxStore(db, c, 1_000_000)
    const noIndex = process.env.OC_NOINDEX === '1'
    const receipts = process.env.OC_RECEIPTS === '1'
    const sentAt = Date.now()
    if (noIndex) {
      const w = c.writeUnsynced.bind(c)
      c.writeUnsynced = async (ops) => await w(ops.filter((o) => !o.key.startsWith('x!')))
    }
    const dest = '12D3KooWRWnMuGqLCbgX7TVdzVHiK7AN95Cx2erVX4AyT3P27xbL'
    const to = 'z6Mkw1KSvjzRuCfVr9NWD5pQxYzrXwK7cTqLzEa1b2c3d4e5'
    const from = 'z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH'
    const packet = new Uint8Array(700).fill(7)
    const ttl = 7 * 24 * 3600 * 1000
    let acked: Promise<unknown> = Promise.resolve()
    const t0 = process.cpuUsage()
    const w0 = performance.now()
    for (let sent = 0; sent < count; sent += WINDOW) {
      const entries: OutboxEntry[] = []
      const writes: Array<Promise<void>> = []
      for (let k = 0; k < WINDOW; k++) {
        const s = outbox.stage(dest, ulid(), to, 'rx', from, Date.now() + ttl, packet)
        writes.push(c.write(noIndex ? s.ops.filter((o) => !o.key.startsWith('x!')) : s.ops))
        entries.push(s.entry)
      }
      await Promise.all(writes)
      await acked
      const removes: Array<Promise<number>> = []
      for (let k = 0; k < entries.length; k += FRAME) removes.push(outbox.remove(entries.slice(k, k + FRAME), receipts ? { extra: (live) => deliveredOps(live.map((e) => ({ id: e.packetId, meta: { to: e.to, from: e.from, dest: e.dest, q: sentAt } })), Date.now()) } : {}))
      acked = Promise.all(removes)
    }
    await acked
    const u = process.cpuUsage(t0)
    void w0
    return { main: 0, all: (u.user + u.system) / count }
  } finally {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
}

async function main (): Promise<void> {
  const count = Number(process.argv[2] ?? 50_000)
  const rounds = Number(process.argv[3] ?? 5)
  await round(5000)
  const all: number[] = []
  for (let i = 0; i < rounds; i++) all.push((await round(count)).all)
  all.sort((a, b) => a - b)
  process.stdout.write(`outbox stage+commit+remove: ${all.map((x) => x.toFixed(1)).join(' ')} us/packet (median ${all[Math.floor(all.length / 2)].toFixed(1)})\n`)
}

await main()
