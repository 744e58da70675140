// In-process cost of each step a packet takes through one amesh host, with
// nothing else running: the store calls the delivery path makes per frame
// or per packet, and the packet codec. Prints p50 / p99 in microseconds.
//   node --import ./dist/src/polyfill.js dist/bench/tools/path-costs.js [N]
import { mkdtemp, rm } from 'node:fs/promises'
import * as cbor from '@ipld/dag-cbor'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, openDb, type Durability } from '../../src/store/db.js'
import { InboxStore } from '../../src/store/inbox.js'
import { OutboxStore } from '../../src/store/outbox.js'
import { decodePacket, decodePacketViaDagCbor, encodePacket } from '../../src/packet/codec.js'
import { renderEntry } from '../../src/packet/render.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { ulid } from '../../src/util/ulid.js'
import type { Packet } from '../../src/packet/types.js'
import { nowMs, p50, p99 } from '../lib/stats.js'
import { text } from '../lib/daemon.js'

async function time (label: string, n: number, body: (i: number) => Promise<unknown> | unknown): Promise<void> {
  const s: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = nowMs()
    await body(i)
    s.push((nowMs() - t0) * 1000)
  }
  process.stdout.write(`${label.padEnd(58)} p50 ${p50(s).toFixed(0).padStart(6)} us   p99 ${p99(s).toFixed(0).padStart(6)} us\n`)
}

/**
 * Mean cost of a synchronous step over `n` calls in a tight loop: wall and
 * process CPU time, median of 7 rounds (resolution below 1 us; CPU time is
 * steadier than wall time on a shared machine).
 */
function loop (label: string, n: number, body: () => unknown): void {
  const wall: number[] = []
  const cpu: number[] = []
  for (let r = 0; r < 7; r++) {
    const t0 = nowMs()
    const c0 = process.cpuUsage()
    for (let i = 0; i < n; i++) body()
    const c = process.cpuUsage(c0)
    wall.push((nowMs() - t0) * 1000 / n)
    cpu.push((c.user + c.system) / n)
  }
  process.stdout.write(`${label.padEnd(58)} wall ${p50(wall).toFixed(2).padStart(7)} us  cpu ${p50(cpu).toFixed(2).padStart(7)} us (median of 7 x ${n})\n`)
}

async function main (): Promise<void> {
  const n = Number(process.argv[2] ?? 2000)
  const dir = await mkdtemp(join(tmpdir(), 'amesh-path-'))
  const from = generateNodeKey().id
  const to = generateNodeKey().id
  const packet = (i: number): Packet => ({ id: ulid(), from, to, from_name: 'tx', to_name: 'rx', signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: text(512, i) }, ts: Date.now() })
  const bytes = encodePacket(packet(0))
  try {
    for (const mode of ['batch', 'always'] as Durability[]) {
      const db = await openDb(join(dir, mode))
      const c = new Committer(db, mode)
      await time(`committer.write 1 put, alone (${mode})`, n, async (i) => { await c.write([{ type: 'put', key: `z!${i}`, value: bytes }]) })
      await db.close()
    }
    const db = await openDb(join(dir, 'main'))
    const c = new Committer(db, 'batch')
    const inbox = new InboxStore(db, c, 1_000_000)
    const outbox = new OutboxStore(db, c, 1_000_000)
    await time('encodePacket 512 B (validate + dag-cbor)', n, (i) => encodePacket(packet(i)))
    const big = encodePacket({ ...packet(1), payload: { text: text(64 * 1024 - 300, 1) } })
    const withProof = encodePacket({ ...packet(2), proof: { grants: [new Uint8Array(300).fill(7), new Uint8Array(280).fill(9)], lineage: [new Uint8Array(180).fill(3)] } })
    for (const [what, b] of [[`${bytes.byteLength} B`, bytes], [`${big.byteLength} B`, big], [`${withProof.byteLength} B, 3 proof tokens`, withProof]] as const) {
      const reps = Math.max(200, Math.floor(n * 2000 / b.byteLength))
      loop(`decodePacket ${what} (dag-cbor + validate)`, reps, () => decodePacketViaDagCbor(b))
      loop(`decodePacket ${what} (direct decoder)`, reps, () => decodePacket(b))
    }
    loop(`cbor.decode ${bytes.byteLength} B, no validation (renderEntry's decode)`, 5000, () => cbor.decode(bytes))
    const dest = '12D3KooWDest'
    let lastKey: string | undefined = undefined
    await time('outbox: prepare + commit 1 entry (send)', n, async (i) => {
      const p = packet(i)
      await c.write(outbox.prepare(dest, p.id, to, 'rx', from, Date.now() + 1e6, bytes))
    })
    await time('outbox.list(after, 256) returning 256 entries (busy link)', n / 10, async () => {
      const l = await outbox.list(dest, lastKey, 256)
      lastKey = l[0]?.key
    })
    const dest1 = '12D3KooWDest1'
    let after1: string | undefined
    await time('send 1 + outbox.list(after, 256) returning it (idle link)', n, async (i) => {
      const p = packet(i)
      await c.write(outbox.prepare(dest1, p.id, to, 'rx', from, Date.now() + 1e6, bytes))
      const l = await outbox.list(dest1, after1, 256)
      if (l.length !== 1) throw new Error(`listed ${l.length}`)
      after1 = l[0].key
    })
    await time('inbox.append 1 packet (dedup get + seq + commit)', n, async (i) => {
      const p = packet(i)
      await inbox.append([{ nodeId: to, packetId: p.id, packet: bytes }])
    })
    await time('inbox.read(after = last - 1, 256) -> 1 entry (follow wake-up)', n, async () => { await inbox.read(to, n - 1, 256) })
    await time('inbox.read(after, 256) -> 256 entries (replay page)', n / 10, async (i) => { await inbox.read(to, i, 256) })
    const [entry] = await inbox.read(to, 0, 1)
    await time('renderEntry (decode + validate + label)', n, () => renderEntry(entry, (id) => id))
    await db.close()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

void main()
