import { scan, type Committer, type RawDb } from '../store/db.js'

const PEER_PREFIX = 'p!'
const enc = new TextEncoder()

/** Peer addresses joined with `amesh join` / `--peer`, used as bootstrap peers on later starts. */
export class PeerBook {
  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  async add (addr: string): Promise<void> {
    await this.committer.write([{ type: 'put', key: PEER_PREFIX + addr, value: enc.encode(String(Date.now())) }])
  }

  /** Forget an address; true when it was remembered. */
  async remove (addr: string): Promise<boolean> {
    const known = await this.db.get(PEER_PREFIX + addr)
    if (known === undefined) return false
    await this.committer.write([{ type: 'del', key: PEER_PREFIX + addr }])
    return true
  }

  async list (): Promise<string[]> {
    const out: string[] = []
    for await (const [key] of scan(this.db, PEER_PREFIX)) out.push(key.slice(PEER_PREFIX.length))
    return out
  }
}
