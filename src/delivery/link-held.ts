// What a link keeps of the entries it sent and awaits the ack of. A frame's
// packets are needed only until the stream took them: a resend after a
// reconnect reads the store again, and only the ack's events (a dead letter,
// a receipt's fallback) read a packet, which the store still holds until the
// entry is settled. Holding each large packet until its ack (a window of 8
// frames, ~128 packets of 64 KiB, often a second under load) makes every one
// of them outlive two scavenges: promoted, its 64 KiB count against V8's
// old-generation limit until a mark-compact frees them (measured T3:
// 12-13 mark-compacts per 1,000 packets on the sender, 7-9 with this;
// docs/PERFORMANCE.md, session 10). So a sent entry's large packet is let go,
// and read back from the store, when its ack arrives, only where an event reads it.
// sortAck then sorts the ack's results over those entries.
import type { OutboxEntry, OutboxStore } from '../store/outbox.js'
import { VIEW_MIN_BYTES, type AckResult } from './frame.js'

/** the packet of an entry in flight whose bytes the link let go */
export const UNHELD = new Uint8Array(0)

/** The entries as the link keeps them in flight: each packet of VIEW_MIN_BYTES or more replaced by UNHELD. */
export function unheld (entries: OutboxEntry[]): OutboxEntry[] {
  if (!entries.some((e) => e.packet.byteLength >= VIEW_MIN_BYTES)) return entries
  return entries.map((e) => e.packet.byteLength >= VIEW_MIN_BYTES ? { ...e, packet: UNHELD } : e)
}

/**
 * The entries with the packets their events read: each UNHELD one for which
 * `wanted` says so read back from the store (a dead letter keeps its packet;
 * a receipt reads one only when it no longer remembers the send). An entry
 * no longer queued (settled meanwhile) keeps UNHELD: every event passes
 * settled entries over before it reads a packet.
 */
export async function reheld (entries: OutboxEntry[], outbox: Pick<OutboxStore, 'packetsOf'>, wanted: (k: number) => boolean): Promise<OutboxEntry[]> {
  const at: number[] = []
  for (let k = 0; k < entries.length; k++) if (entries[k].packet === UNHELD && wanted(k)) at.push(k)
  if (at.length === 0) return entries
  const packets = await outbox.packetsOf(at.map((k) => entries[k].key))
  const out = entries.slice()
  for (let j = 0; j < at.length; j++) {
    const p = packets[j]
    if (p !== undefined) out[at[j]] = { ...entries[at[j]], packet: p }
  }
  return out
}

/** An ack's results sorted by what they say: accepted, refused for good, or a RETRY answer (its first one). */
export interface SortedAck {
  delivered: OutboxEntry[]
  rejected?: Array<{ entry: OutboxEntry, code: string, reason: string }>
  retry?: { c: string, m: string }
}

/** Sort an ack's results (one per packet, in frame order) over the frame's entries. */
export function sortAck (results: AckResult[], entries: OutboxEntry[]): SortedAck {
  const out: SortedAck = { delivered: [] }
  for (let k = 0; k < results.length; k++) {
    const r = results[k]
    if ('s' in r) out.delivered.push(entries[k])
    else if (r.r === true) out.retry ??= r
    else (out.rejected ??= []).push({ entry: entries[k], code: r.c, reason: r.m })
  }
  return out
}
