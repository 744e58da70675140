import type { Committer, RawDb } from '../store/db.js'
import { PeerRecords } from '../store/peers.js'

/** Peer addresses joined with `amesh join` / `--peer`, used as bootstrap peers on later starts. */
export class PeerBook {
  private readonly records: PeerRecords

  constructor (db: RawDb, committer: Committer) {
    this.records = new PeerRecords(db, committer)
  }

  async add (addr: string): Promise<void> {
    await this.records.add(addr)
  }

  /** Forget an address; true when it was remembered. */
  async remove (addr: string): Promise<boolean> {
    return await this.records.remove(addr)
  }

  async list (): Promise<string[]> {
    return await this.records.list()
  }
}
