import * as cbor from '@ipld/dag-cbor'
import { scan, type Committer, type RawDb } from './db.js'
import { Bucket } from './schema.js'

const ONE = new Uint8Array([1])

/** Where a held grant chain is filed: its audience, subject and (last) token id. */
export interface HeldChainKey { aud: string, sub: string, id: string }

/**
 * The permission records of a host, as stored: grant chains (encoded tokens,
 * root first) held by its nodes and issued by them, revocations (the signed
 * bytes, append-only) and blocks. Tokens and revocations stay encoded here;
 * decoding and verifying them is the ACL's.
 */
export class AclRecords {
  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  async * heldChains (): AsyncGenerator<Uint8Array[]> {
    for await (const [, v] of scan(this.db, Bucket.heldGrant)) yield cbor.decode<Uint8Array[]>(v)
  }

  async * issuedChains (): AsyncGenerator<Uint8Array[]> {
    for await (const [, v] of scan(this.db, Bucket.issuedGrant)) yield cbor.decode<Uint8Array[]>(v)
  }

  async * revocations (): AsyncGenerator<Uint8Array> {
    for await (const [, v] of scan(this.db, Bucket.revocation)) yield v
  }

  /** Every block, as `<node id>!<sender id>`. */
  async * blocks (): AsyncGenerator<string> {
    for await (const [k] of scan(this.db, Bucket.block)) yield k.slice(Bucket.block.length)
  }

  async putHeld (at: HeldChainKey, chain: Uint8Array[]): Promise<void> {
    await this.committer.write([{ type: 'put', key: `${Bucket.heldGrant}${at.aud}!${at.sub}!${at.id}`, value: cbor.encode(chain) }])
  }

  async putIssued (id: string, chain: Uint8Array[]): Promise<void> {
    await this.committer.write([{ type: 'put', key: Bucket.issuedGrant + id, value: cbor.encode(chain) }])
  }

  async putRevocation (token: string, revoker: string, bytes: Uint8Array): Promise<void> {
    await this.committer.write([{ type: 'put', key: `${Bucket.revocation}${token}!${revoker}`, value: bytes }])
  }

  async deleteRevocation (token: string, revoker: string): Promise<void> {
    await this.committer.write([{ type: 'del', key: `${Bucket.revocation}${token}!${revoker}` }])
  }

  async setBlock (node: string, sender: string, on: boolean): Promise<void> {
    const key = `${Bucket.block}${node}!${sender}`
    await this.committer.write([on ? { type: 'put', key, value: ONE } : { type: 'del', key }])
  }
}
