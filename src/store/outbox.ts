import * as cbor from '@ipld/dag-cbor'
import { OutboxFullError } from '../util/errors.js'
import { scan, type Committer, type RawDb, type WriteOp } from './db.js'

const OUTBOX_PREFIX = 'o!'
const DEAD_PREFIX = 'x!'

export interface OutboxEntry {
  /** store key: o!<destPeer>!<packetId> */
  key: string
  dest: string
  packetId: string
  to: string
  from: string
  /** expiry, ms since the epoch */
  exp: number
  packet: Uint8Array
}

export interface DeadLetter {
  packetId: string
  dest: string
  to: string
  from: string
  code: string
  reason: string
  at: number
  packet: Uint8Array
}

interface StoredEntry { to: string, from: string, exp: number, p: Uint8Array }

export function outboxKey (dest: string, packetId: string): string {
  return `${OUTBOX_PREFIX}${dest}!${packetId}`
}

function parseKey (key: string): { dest: string, packetId: string } {
  const rest = key.slice(OUTBOX_PREFIX.length)
  const i = rest.lastIndexOf('!')
  return { dest: rest.slice(0, i), packetId: rest.slice(i + 1) }
}

function toEntry (key: string, value: Uint8Array): OutboxEntry {
  const v = cbor.decode<StoredEntry>(value)
  return { key, ...parseKey(key), to: v.to, from: v.from, exp: v.exp, packet: v.p }
}

/**
 * Per-destination-host queues of durable packets waiting for an ack, plus the
 * dead letters of packets that expired or were rejected for good.
 */
export class OutboxStore {
  private readonly depth = new Map<string, number>()
  private deadCount = 0

  constructor (private readonly db: RawDb, private readonly committer: Committer, private readonly capPerDest: number) {}

  async load (): Promise<void> {
    for await (const [key] of this.db.iterator({ gt: OUTBOX_PREFIX, lt: OUTBOX_PREFIX + '\xff', values: false })) {
      const { dest } = parseKey(key)
      this.depth.set(dest, (this.depth.get(dest) ?? 0) + 1)
    }
    for await (const _ of this.db.iterator({ gt: DEAD_PREFIX, lt: DEAD_PREFIX + '\xff', values: false })) this.deadCount++
  }

  destinations (): string[] {
    return [...this.depth.entries()].filter(([, n]) => n > 0).map(([d]) => d)
  }

  depthOf (dest: string): number { return this.depth.get(dest) ?? 0 }

  totals (): { queued: number, dead: number, byDestination: Record<string, number> } {
    let queued = 0
    const byDestination: Record<string, number> = {}
    for (const [d, n] of this.depth) { if (n > 0) { byDestination[d] = n; queued += n } }
    return { queued, dead: this.deadCount, byDestination }
  }

  /** Reserve room and build the write ops; the caller commits them. */
  prepare (dest: string, packetId: string, to: string, toLabel: string, from: string, exp: number, packet: Uint8Array): WriteOp {
    const n = this.depthOf(dest)
    if (n >= this.capPerDest) {
      throw new OutboxFullError(`outbox full for ${toLabel}: ${n} packets already wait for its host (limit ${this.capPerDest})`)
    }
    this.depth.set(dest, n + 1)
    return { type: 'put', key: outboxKey(dest, packetId), value: cbor.encode({ to, from, exp, p: packet }) }
  }

  /** Undo a reservation whose write failed. */
  release (dest: string): void {
    this.depth.set(dest, Math.max(0, this.depthOf(dest) - 1))
  }

  async list (dest: string, afterKey: string | undefined, limit: number): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = []
    for await (const [key, value] of scan(this.db, `${OUTBOX_PREFIX}${dest}!`, { after: afterKey, limit })) {
      out.push(toEntry(key, value))
    }
    return out
  }

  /** Delivered: remove the entries (no sync needed: a resend is deduplicated). */
  async remove (entries: OutboxEntry[]): Promise<void> {
    if (entries.length === 0) return
    for (const e of entries) this.depth.set(e.dest, Math.max(0, this.depthOf(e.dest) - 1))
    await this.committer.write(entries.map((e) => ({ type: 'del', key: e.key })))
  }

  /** Move entries to the dead letters with a reason. */
  async kill (entries: Array<{ entry: OutboxEntry, code: string, reason: string }>, extra: WriteOp[] = []): Promise<void> {
    if (entries.length === 0) return
    const ops: WriteOp[] = [...extra]
    const at = Date.now()
    for (const { entry, code, reason } of entries) {
      this.depth.set(entry.dest, Math.max(0, this.depthOf(entry.dest) - 1))
      ops.push({ type: 'del', key: entry.key })
      const dead = { packetId: entry.packetId, dest: entry.dest, to: entry.to, from: entry.from, code, reason, at, packet: entry.packet }
      ops.push({ type: 'put', key: DEAD_PREFIX + entry.packetId, value: cbor.encode(dead) })
    }
    this.deadCount += entries.length
    await this.committer.write(ops)
  }

  async expired (now: number, limit: number): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = []
    for await (const [key, value] of scan(this.db, OUTBOX_PREFIX)) {
      const e = toEntry(key, value)
      if (e.exp <= now) out.push(e)
      if (out.length >= limit) break
    }
    return out
  }

  async deadLetters (limit: number): Promise<DeadLetter[]> {
    const out: DeadLetter[] = []
    for await (const [, value] of scan(this.db, DEAD_PREFIX, { limit })) out.push(cbor.decode<DeadLetter>(value))
    return out
  }
}
