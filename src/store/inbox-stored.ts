// A page of an inbox as its stored values (the fast path of InboxStore.read
// for pages framed as stored bytes, follow-frames.ts): the seqs and the `i!`
// values as LevelDB holds them, read in large native chunks (classic-level's
// nextv) with no per-entry object. InboxStore.read stays the reference: the
// same entries, in the same order, under the same limit and byte bound.
import type { RawDb } from './db.js'
import { decodeInboxValue, encodeInboxValue, ENTRY_FORMAT, plainInboxValue, seqFromKey, seqKey, type InboxEntry } from './inbox-values.js'
import { isValueGone, type ValueReader } from './value-log.js'
import { Bucket } from './schema.js'
import type { InboxTails } from './inbox-tails.js'

/**
 * bytes the native iterator reads ahead per nextv call (classic-level's
 * highWaterMarkBytes, default 16 KiB: about 25 entries of 512 B per native
 * round trip); a follow page of about 1 MiB then comes in one or two calls
 */
const NEXTV_BYTES = 1024 * 1024

/** Entries of one node's inbox in seq order: seqs[k] with its stored value values[k] (format 1, or the old CBOR map). */
export interface StoredPage {
  seqs: number[]
  values: Uint8Array[]
  /** stored bytes of the values */
  bytes: number
  /** every value is of format 1 ([0x01][received: f64 BE][packet], inbox-values.ts) */
  plain: boolean
}

/** The entries of a page, as InboxStore.read gives them. */
export function entriesOf (page: StoredPage): InboxEntry[] {
  return page.values.map((value, k) => {
    const v = decodeInboxValue(value)
    return { seq: page.seqs[k], packet: v.p, received: v.r }
  })
}

export function storedPageOf (entries: readonly InboxEntry[]): StoredPage {
  const page: StoredPage = { seqs: [], values: [], bytes: 0, plain: true }
  for (const e of entries) {
    const value = encodeInboxValue(e.received, e.packet)
    page.seqs.push(e.seq)
    page.values.push(value)
    page.bytes += value.byteLength
  }
  return page
}

/**
 * Entries after seq `after`: at most `limit`, and no more once their stored
 * bytes reach `maxBytes` (always at least one entry), as InboxStore.read.
 */
export async function readStoredPage (db: RawDb, nodeId: string, after: number, limit: number, maxBytes: number, values?: ValueReader): Promise<StoredPage> {
  const page: StoredPage = { seqs: [], values: [], bytes: 0, plain: true }
  await eachStoredValue(db, nodeId, after, limit, maxBytes, values, (seq, value) => {
    page.seqs.push(seq)
    page.values.push(value)
    page.bytes += value.byteLength
    if (value[0] !== ENTRY_FORMAT) page.plain = false
    return true
  })
  return page
}

/**
 * readStoredPage's entries handed to `each` one at a time, in seq order, as
 * the native iterator returns them (nothing kept here: a consumer that copies
 * each value lets it die young instead of holding the whole page). Stops when
 * `each` returns false; returns whether every entry was taken. A separated
 * value is handed over as format 1, read back from the value log; an entry
 * whose value-log segment is gone was deleted after the read began, and is
 * passed over. The byte bound counts the values handed over.
 */
export async function eachStoredValue (db: RawDb, nodeId: string, after: number, limit: number, maxBytes: number, values: ValueReader | undefined, each: (seq: number, value: Uint8Array) => boolean): Promise<boolean> {
  const it = db.iterator({ gt: seqKey(nodeId, after), lt: `${Bucket.inbox}${nodeId}!\xff`, limit, highWaterMarkBytes: Math.max(1, Math.min(NEXTV_BYTES, maxBytes)) })
  let count = 0
  let bytes = 0
  try {
    while (count < limit && bytes < maxBytes) {
      const chunk = await it.nextv(limit - count)
      if (chunk.length === 0) break
      for (const [key, stored] of chunk) {
        count++
        const value = plainOrGone(stored, values)
        bytes += value?.byteLength ?? 0
        if (value !== undefined && !each(seqFromKey(key), value)) return false
        if (bytes >= maxBytes) break
      }
    }
  } finally {
    await it.close()
  }
  return true
}

/**
 * InboxStore.eachStored: readStored's entries handed to `each` one at a time,
 * from the in-memory tail when it holds them (as readStored takes them), else
 * as eachStoredValue reads them.
 */
export async function eachStored (db: RawDb, tails: InboxTails, nodeId: string, after: number, limit: number, maxBytes: number, values: ValueReader | undefined, each: (seq: number, value: Uint8Array) => boolean): Promise<boolean> {
  const cached = tails.read(nodeId, after, limit)
  if (cached === undefined) return await eachStoredValue(db, nodeId, after, limit, maxBytes, values, each)
  return cached.every((e) => each(e.seq, encodeInboxValue(e.received, e.packet)))
}

/** A stored value as format 1 (or the old CBOR map); undefined when its value-log segment is gone. */
export function plainOrGone (value: Uint8Array, values: ValueReader | undefined): Uint8Array | undefined {
  try {
    return plainInboxValue(value, values)
  } catch (err) {
    if (isValueGone(err)) return undefined
    throw err
  }
}
