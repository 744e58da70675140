import { toJsonBytes, type Committer, type RawDb } from './db.js'
import { jsonValues } from './json-scan.js'
import { Bucket } from './schema.js'

/**
 * The host's ssh joins, stored as their JSON spec under the join's key
 * (`<destination>:<port>:<remote home>`). Specs come back as plain JSON
 * values; what a spec means is the tunnel supervisor's.
 */
export class SshJoinRecords {
  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  /** Every stored spec; a value that is not JSON is passed to `onUnreadable` and skipped. */
  async * all (onUnreadable: (err: unknown) => void = () => {}): AsyncGenerator<unknown> {
    yield * jsonValues(this.db, Bucket.sshJoin, onUnreadable)
  }

  async put (key: string, spec: unknown): Promise<void> {
    await this.committer.write([{ type: 'put', key: Bucket.sshJoin + key, value: toJsonBytes(spec) }])
  }

  async delete (key: string): Promise<void> {
    await this.committer.write([{ type: 'del', key: Bucket.sshJoin + key }])
  }
}
