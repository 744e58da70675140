// In-process CPU cost per entry of each step of a replay (T4 / T4.read), with
// nothing else running: the store's read of follow pages, the follow frame,
// the client's rendering of it, and the inbox.read reply and its parse.
//   node --expose-gc --import ./dist/src/polyfill.js dist/bench/tools/replay-costs.js [N] [ROUNDS]
// (--expose-gc: also the heap the inbox holds after storing N entries)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, openDb, scan } from '../../src/store/db.js'
import { InboxStore, type InboxEntry } from '../../src/store/inbox.js'
import { encodePacket } from '../../src/packet/codec.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { ulid } from '../../src/util/ulid.js'
import { decodeFollowPage, encodeFollowPage, encodeFollowValues, renderFollowPage } from '../../src/control/follow-frames.js'
import { PacketDecoder } from '../../src/packet/decode-fast.js'
import { renderPacket } from '../../src/packet/render.js'
import type { Packet } from '../../src/packet/types.js'
import { entriesJsonEncoder } from '../../src/packet/render-json.js'
import { JsonBytes } from '../../src/util/json-bytes.js'
import { Bucket } from '../../src/store/schema.js'
import { p50 } from '../lib/stats.js'
import { text } from '../lib/daemon.js'

/** follow's page sizes: 256 first, then about 1 MiB of packets (api-follow.ts) */
const FOLLOW_FIRST = 256
const FOLLOW_NEXT = 950
/** the grant token the bench's packets carry (T4's sends: src was granted by dst) */
const GRANT_BYTES = 321
const READ_LIMIT = 10_000

/** the message ids InboxStore remembers (inbox.ts RECENT_IDS) */
const RECENT = 16_384

/** V8 heap used after a full GC (with --expose-gc), bytes */
function heapAfterGc (): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) return undefined
  gc(); gc()
  return process.memoryUsage().heapUsed
}

async function cpu (label: string, count: number, rounds: number, body: () => Promise<void>): Promise<void> {
  const per: number[] = []
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage()
    await body()
    const c = process.cpuUsage(c0)
    per.push((c.user + c.system) / count)
  }
  process.stdout.write(`${label.padEnd(56)} cpu ${p50(per).toFixed(2).padStart(6)} us/entry (median of ${rounds}: ${per.map((x) => x.toFixed(2)).join(' ')})\n`)
}

/** The pages follow reads, each handed to `page`. */
async function followPages (inbox: InboxStore, node: string, page: (entries: InboxEntry[]) => void): Promise<void> {
  let after = 0
  let limit = FOLLOW_FIRST
  for (;;) {
    const entries = await inbox.read(node, after, limit)
    if (entries.length === 0) return
    page(entries)
    after = entries[entries.length - 1].seq
    limit = FOLLOW_NEXT
  }
}

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000)
  const rounds = Number(process.argv[3] ?? 5)
  const dir = await mkdtemp(join(tmpdir(), 'amesh-replay-'))
  const from = generateNodeKey().id
  const to = generateNodeKey().id
  const label = (id: string): string => id === from ? 'src' : id === to ? 'dst' : id
  try {
    const db = await openDb(join(dir, 'db'))
    const inbox = new InboxStore(db, new Committer(db, 'none'), 10_000_000)
    const heap0 = heapAfterGc()
    // the bench's packets carry one grant token (321 B) in their proof: 1,104 B stored per packet
    const grant = Uint8Array.from({ length: GRANT_BYTES }, (_, k) => (k * 37) & 0xff)
    for (let i = 0; i < n; i += 1000) {
      const items = Array.from({ length: Math.min(1000, n - i) }, (_, k) => {
        const p = { id: ulid(), from, to, from_name: 'src', to_name: 'dst', signal: 'MESSAGE' as const, scope: { files: [], zone: 'project' as const }, payload: { text: text(512, i + k) }, ts: Date.now(), proof: { grants: [grant] } }
        return { nodeId: to, packetId: p.id, packet: encodePacket(p) }
      })
      await inbox.append(items)
    }
    const heap1 = heapAfterGc()
    if (heap0 !== undefined && heap1 !== undefined) process.stdout.write(`${'heap held after storing them (--expose-gc)'.padEnd(56)} ${((heap1 - heap0) / 2 ** 20).toFixed(1)} MiB = ${((heap1 - heap0) / n).toFixed(0)} B/entry (the inbox keeps the last ${RECENT} ids)\n`)
    await cpu('raw iterator (for await, utf8 keys, view values)', n, rounds, async () => {
      let k = 0
      for await (const _ of scan(db, `${Bucket.inbox}${to}!`)) k++
      if (k !== n) throw new Error(`scanned ${k}`)
    })
    await cpu('inbox.read follow pages', n, rounds, async () => { await followPages(inbox, to, () => {}) })
    const frames: Uint8Array[] = []
    await cpu('inbox.read follow pages + encodeFollowPage', n, rounds, async () => {
      frames.length = 0
      await followPages(inbox, to, (entries) => { frames.push(encodeFollowPage(entries, label)) })
    })
    const stored: Uint8Array[] = []
    await cpu('inbox.readStored follow pages + encodeFollowValues', n, rounds, async () => {
      stored.length = 0
      let after = 0
      let limit = FOLLOW_FIRST
      for (;;) {
        const page = await inbox.readStored(to, after, limit)
        if (page.seqs.length === 0) break
        stored.push(encodeFollowValues(page.seqs, page.values, label))
        after = page.seqs[page.seqs.length - 1]
        limit = FOLLOW_NEXT
      }
      if (stored.length !== frames.length || stored.some((f, k) => Buffer.compare(f, frames[k]) !== 0)) throw new Error('stored frames differ from the reference')
    })
    await cpu('client: renderFollowPage of those frames', n, rounds, async () => {
      let k = 0
      for (const f of frames) k += renderFollowPage(f.subarray(9)).length
      if (k !== n) throw new Error(`rendered ${k}`)
    })
    await cpu('client: the same by PacketDecoder + renderPacket (before)', n, rounds, async () => {
      let k = 0
      for (const f of frames) {
        const { entries, labels } = decodeFollowPage(f.subarray(9))
        const decoder = new PacketDecoder()
        for (const e of entries) { renderPacket(decoder.decode(e.packet) as Packet, e, (id) => labels.get(id) ?? id); k++ }
      }
      if (k !== n) throw new Error(`rendered ${k}`)
    })
    const replies: Buffer[] = []
    await cpu('inbox.read pages of 10,000 + JSON reply', n, rounds, async () => {
      replies.length = 0
      let after = 0
      for (;;) {
        const entries = await inbox.read(to, after, READ_LIMIT)
        if (entries.length === 0) return
        const enc = entriesJsonEncoder(entries, label)
        const out = new JsonBytes(entries.length * 800)
        out.ascii('{"id":1,"result":[')
        for (let k = 0; k < entries.length; k++) { if (k > 0) out.byte(0x2c); enc(k, out) }
        out.ascii(']}\n')
        replies.push(Buffer.from(out.bytes()))
        after = entries[entries.length - 1].seq
      }
    })
    await cpu('client: JSON.parse of those replies', n, rounds, async () => {
      let k = 0
      for (const r of replies) k += (JSON.parse(r.toString('utf8')) as { result: unknown[] }).result.length
      if (k !== n) throw new Error(`parsed ${k}`)
    })
    await db.close()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

void main()
