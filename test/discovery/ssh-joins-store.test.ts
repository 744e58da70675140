import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Libp2p } from '@libp2p/interface'
import { SshJoins } from '../../src/discovery/tunnels.js'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { Bucket } from '../../src/store/schema.js'

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)

describe('discovery - SshJoins over the j! records', () => {
  let dir: string
  let db: RawDb
  let joins: SshJoins | undefined

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-joins-')); db = await openDb(join(dir, 'store')) })
  afterEach(async () => { joins?.stop(); await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('resume - starts a tunnel for each stored join; a stored value that is not JSON is logged and skipped; leave deletes the record', async () => {
    const committer = new Committer(batchTarget(db), 'batch')
    const spec = { destination: 'nobody@127.0.0.1', port: 1, options: ['ConnectTimeout=1'] }
    await committer.write([
      { type: 'put', key: Bucket.sshJoin + 'broken:22:', value: bytes('{broken') },
      { type: 'put', key: Bucket.sshJoin + 'nobody@127.0.0.1:1:', value: bytes(JSON.stringify(spec)) }
    ])
    const lines: string[] = []
    // no dial happens: the ssh query to port 1 fails first and the tunnel backs off
    joins = new SshJoins(db, committer, { libp2p: {} as unknown as Libp2p, log: (l) => lines.push(l) })
    await joins.resume()
    assert.equal(lines.filter((l) => l.startsWith('ssh joins: skipping a stored join: ')).length, 1)
    assert.deepEqual(joins.list().map((t) => t.target), ['nobody@127.0.0.1:1:'])
    assert.equal(await joins.leave('nobody@127.0.0.1:1:'), true)
    const keys: string[] = []
    for await (const k of db.keys()) keys.push(k)
    assert.deepEqual(keys, ['j!broken:22:'])
  })
})
