// kad-dht 15 stores whatever validly signed record a peer PUTs, overwriting
// the one it holds: a replayed old card (validly signed, but stale) would
// replace the newer one until the next republish. This datastore applies
// amesh's selectors on every write of a DHT record, so a peer keeps the better
// of the record it holds and the one offered (newest card, largest claim
// set); records of other key types are stored as given. Name records are
// merged rather than selected: every claim is self-authenticating, so a peer
// keeps the union of the live claims it held and those offered, and a second
// claimant's PUT cannot wipe out the first claim (collisions stay visible).
//
// Note: `datastore-core` is libp2p's own dependency (its default datastore).

import { MemoryDatastore } from 'datastore-core'
import type { Key } from 'interface-datastore'
import type { Selectors } from '@libp2p/kad-dht'
import { CARD_KEY_TYPE, NAME_KEY_TYPE, ameshSelectors, encodeNameRecord, mergeNameClaims, parseKey } from './records.js'

const RECORD_PREFIX = '/dht/record/'
const MAX_RECORD = 64 * 1024

interface DhtRecord { key: Uint8Array, value: Uint8Array, rest: Uint8Array[] }

function encodeVarint (n: number): number[] {
  const out: number[] = []
  while (n > 127) { out.push((n & 0x7f) | 0x80); n = Math.floor(n / 128) }
  out.push(n)
  return out
}

function field (n: number, bytes: Uint8Array): Uint8Array {
  return new Uint8Array([...encodeVarint((n << 3) | 2), ...encodeVarint(bytes.length), ...bytes])
}

/** Serialize a record again with a new value (other fields kept as they were). */
export function encodeDhtRecord (rec: DhtRecord): Uint8Array {
  return Buffer.concat([field(1, rec.key), field(2, rec.value), ...rec.rest])
}

function varint (buf: Uint8Array, at: number): [number, number] {
  let n = 0
  let shift = 0
  for (let i = at; i < buf.length && i < at + 5; i++) {
    n += (buf[i] & 0x7f) * 2 ** shift
    if ((buf[i] & 0x80) === 0) return [n, i + 1]
    shift += 7
  }
  throw new RangeError('bad varint')
}

/** Read fields 1 (key) and 2 (value) of a serialized libp2p Record protobuf; undefined when malformed. */
export function decodeDhtRecord (buf: Uint8Array): DhtRecord | undefined {
  if (buf.length > MAX_RECORD) return undefined
  try {
    let key: Uint8Array | undefined
    let value: Uint8Array | undefined
    const rest: Uint8Array[] = []
    let at = 0
    while (at < buf.length) {
      const [tag, next] = varint(buf, at)
      const wire = tag & 7
      let end: number
      if (wire === 2) {
        const [len, start] = varint(buf, next)
        end = start + len
        if (end > buf.length) return undefined
        const bytes = buf.subarray(start, end)
        if (tag >>> 3 === 1) key = bytes
        else if (tag >>> 3 === 2) value = bytes
        else rest.push(buf.subarray(at, end))
      } else if (wire === 0) {
        end = varint(buf, next)[1]
        rest.push(buf.subarray(at, end))
      } else {
        return undefined
      }
      at = end
    }
    return key !== undefined && value !== undefined ? { key, value, rest } : undefined
  } catch {
    return undefined
  }
}

/** The MemoryDatastore libp2p would use, with a selector applied to DHT record writes. */
export class SelectingDatastore extends MemoryDatastore {
  constructor (private readonly selectors: Selectors = ameshSelectors) {
    super()
  }

  put (key: Key, val: Uint8Array): ReturnType<MemoryDatastore['put']> {
    if (!key.toString().startsWith(RECORD_PREFIX)) return super.put(key, val)
    const merged = this.mergedName(key, val)
    if (merged !== undefined) return super.put(key, merged)
    if (this.keepsExisting(key, val)) return key
    return super.put(key, val)
  }

  private held (key: Key): DhtRecord | undefined {
    let held: unknown
    try {
      held = super.get(key)
    } catch {
      return undefined
    }
    return held instanceof Uint8Array ? decodeDhtRecord(held) : undefined
  }

  /** For a name record: the offered record carrying the union of live claims; undefined for other records. */
  private mergedName (key: Key, offered: Uint8Array): Uint8Array | undefined {
    const b = decodeDhtRecord(offered)
    if (b === undefined) return undefined
    let name: string
    try {
      const parsed = parseKey(b.key)
      if (parsed.type !== 'name') return undefined
      name = parsed.name
    } catch {
      return undefined
    }
    const a = this.held(key)
    const values = a !== undefined && Buffer.compare(a.key, b.key) === 0 ? [a.value, b.value] : [b.value]
    const claims = mergeNameClaims(name, values)
    if (claims.length === 0) return undefined
    return encodeDhtRecord({ ...b, value: encodeNameRecord(claims) })
  }

  private keepsExisting (key: Key, offered: Uint8Array): boolean {
    const a = this.held(key)
    const b = decodeDhtRecord(offered)
    if (a === undefined || b === undefined) return false
    let type: string
    try {
      type = parseKey(b.key).type === 'card' ? CARD_KEY_TYPE : NAME_KEY_TYPE
    } catch {
      return false
    }
    const select = this.selectors[type]
    if (select === undefined || Buffer.compare(a.key, b.key) !== 0) return false
    return select(b.key, [b.value, a.value]) === 1 && Buffer.compare(a.value, b.value) !== 0
  }
}
