import { toJsonBytes, type Committer, type RawDb } from './db.js'
import { jsonValues } from './json-scan.js'
import { Bucket } from './schema.js'

/**
 * Signed cards of nodes on other hosts, one per node id, stored as the card's
 * JSON. Values come back unverified (`unknown`): verifying a card is
 * discovery's.
 */
export class CardRecords {
  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  /** Every stored card; a value that is not JSON is passed to `onUnreadable` and skipped. */
  async * all (onUnreadable: (err: unknown) => void = () => {}): AsyncGenerator<unknown> {
    yield * jsonValues(this.db, Bucket.card, onUnreadable)
  }

  async put (nodeId: string, card: unknown): Promise<void> {
    await this.committer.write([{ type: 'put', key: Bucket.card + nodeId, value: toJsonBytes(card) }])
  }

  async delete (nodeIds: readonly string[]): Promise<void> {
    if (nodeIds.length === 0) return
    await this.committer.write(nodeIds.map((id) => ({ type: 'del' as const, key: Bucket.card + id })))
  }
}
