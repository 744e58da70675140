import { scan, type Committer, type RawDb } from './db.js'
import { Bucket } from './schema.js'

const enc = new TextEncoder()

/** Peer addresses joined with `amesh join` / `--peer`, each with the time it was added. */
export class PeerRecords {
  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  async add (addr: string, at: number = Date.now()): Promise<void> {
    await this.committer.write([{ type: 'put', key: Bucket.peer + addr, value: enc.encode(String(at)) }])
  }

  /** Forget an address; true when it was remembered. */
  async remove (addr: string): Promise<boolean> {
    if (await this.db.get(Bucket.peer + addr) === undefined) return false
    await this.committer.write([{ type: 'del', key: Bucket.peer + addr }])
    return true
  }

  async list (): Promise<string[]> {
    const out: string[] = []
    for await (const [key] of scan(this.db, Bucket.peer)) out.push(key.slice(Bucket.peer.length))
    return out
  }
}
