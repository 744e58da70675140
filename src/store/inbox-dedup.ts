// The receiver's message-id records (schema.ts `dedup`, `i~<id>`): where a
// stored message id is, for duplicate checks and lookup by id, and their
// retention. A store written before session 15 holds them under `d!`
// (`dedupBefore`); those are read and pruned beside the new ones, never
// written, until the last has passed the dedup window (no migration at open:
// a busy receiver's window can hold millions).
import { fromJsonBytes, type Committer, type RawDb, type WriteOp } from './db.js'
import type { Where } from './inbox-ids.js'
import { Bucket } from './schema.js'

const PREFIX = Bucket.dedup
const OLD_PREFIX = Bucket.dedupBefore
/** deleted per retention step */
const PRUNE_CHUNK = 5000

export class DedupRecords {
  /**
   * Whether the store may hold ids under the old prefix (an upgraded store,
   * within the dedup window of its upgrade): read once, and cleared by the
   * retention pass that deletes the last of them.
   */
  private oldIds?: Promise<boolean>

  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  /** The key of a message id's record. */
  key (packetId: string): string { return PREFIX + packetId }

  /** The greatest message id stored under either prefix, or '' when none is. */
  async newest (): Promise<string> {
    const [current, old] = await Promise.all([this.newestUnder(PREFIX), this.newestUnder(OLD_PREFIX)])
    this.oldIds ??= Promise.resolve(old !== '')
    return current > old ? current : old
  }

  /** Where each of `ids` is stored: under today's prefix, and for those not found there, the old one (one getMany each). */
  async find (ids: string[]): Promise<Map<string, Where>> {
    const found = new Map<string, Where>()
    await this.readUnder(PREFIX, ids, found)
    if (found.size < ids.length && await this.hasOldIds()) await this.readUnder(OLD_PREFIX, ids.filter((id) => !found.has(id)), found)
    return found
  }

  /** Delete the ids minted before the ULID time prefix `cut`, under both prefixes; how many went. */
  async prune (cut: string): Promise<number> {
    let total = await this.pruneUnder(PREFIX, cut)
    if (await this.hasOldIds()) {
      total += await this.pruneUnder(OLD_PREFIX, cut)
      if (await this.newestUnder(OLD_PREFIX) === '') this.oldIds = Promise.resolve(false)
    }
    return total
  }

  private async hasOldIds (): Promise<boolean> {
    this.oldIds ??= this.newestUnder(OLD_PREFIX).then((id) => id !== '')
    return await this.oldIds
  }

  private async newestUnder (prefix: string): Promise<string> {
    for await (const key of this.db.keys({ gt: prefix, lt: prefix + '\xff', reverse: true, limit: 1 })) return key.slice(prefix.length)
    return ''
  }

  private async readUnder (prefix: string, ids: string[], into: Map<string, Where>): Promise<void> {
    const values = await this.db.getMany(ids.map((id) => prefix + id))
    values.forEach((v, k) => { if (v !== undefined) into.set(ids[k], fromJsonBytes<Where>(v)) })
  }

  private async pruneUnder (prefix: string, cut: string): Promise<number> {
    let total = 0
    for (;;) {
      const ops: WriteOp[] = []
      for await (const key of this.db.keys({ gt: prefix, lt: prefix + cut, limit: PRUNE_CHUNK })) ops.push({ type: 'del', key })
      // unsynced: an id whose deletion is lost is only remembered longer
      await this.committer.writeUnsynced(ops)
      total += ops.length
      if (ops.length < PRUNE_CHUNK) return total
    }
  }
}
