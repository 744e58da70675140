import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as cbor from '@ipld/dag-cbor'
import { encodeRevocation, encodeToken, issueRevocation, issueToken, tokenId } from '../../src/acl/index.js'
import { AclStore } from '../../src/authz/acl-store.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { AclRecords } from '../../src/store/acl-records.js'
import { CardRecords } from '../../src/store/cards.js'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { InboxStore } from '../../src/store/inbox.js'
import { NodeStore } from '../../src/store/nodes.js'
import { OutboxStore } from '../../src/store/outbox.js'
import { PeerRecords } from '../../src/store/peers.js'
import { BUCKET_PREFIXES, Bucket, bucketOf } from '../../src/store/schema.js'
import { SshJoinRecords } from '../../src/store/ssh-joins.js'
import { ulid } from '../../src/util/ulid.js'

const A = 'did:key:zNodeA'
const B = 'did:key:zNodeB'
const P1 = '12D3KooWPeerOne'
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)
const text = (b: Uint8Array): string => new TextDecoder().decode(b)
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')

/** Every key and value in the store, in key order. */
async function dump (db: RawDb): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>()
  for await (const [k, v] of db.iterator()) out.set(k, v)
  return out
}

async function drain<T> (it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('store - schema and repositories', () => {
  let dir: string
  let db: RawDb
  let committer: Committer

  const open = async (): Promise<void> => {
    db = await openDb(join(dir, 'store'))
    committer = new Committer(batchTarget(db), 'batch')
  }
  const reopen = async (): Promise<void> => { await db.close(); await open() }

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-schema-')); await open() })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('schema - one distinct prefix per bucket, each ending in "!" but the dedup ids\' "i~", the only nesting being g!h! and g!i! (no bucket is named "g!")', () => {
    assert.equal(new Set(BUCKET_PREFIXES).size, BUCKET_PREFIXES.length)
    for (const p of BUCKET_PREFIXES) assert.match(p, /^([a-z]!([a-z]!)?|i~)$/)
    const nested = BUCKET_PREFIXES.filter((p) => BUCKET_PREFIXES.some((q) => q !== p && p.startsWith(q)))
    assert.deepEqual(nested, [])
    assert.equal(bucketOf('g!h!x!y!z'), 'heldGrant')
    assert.equal(bucketOf('g!i!z'), 'issuedGrant')
    assert.equal(bucketOf('q!anything'), undefined)
    assert.equal(bucketOf('i~01J0000000000000000000000'), 'dedup')
    assert.equal(bucketOf('d!01J0000000000000000000000'), 'dedupBefore')
  })

  it('schema - the dedup ids sort right after every inbox key and before every other bucket (a batch of both spans no older inbox value)', () => {
    const ids = [ulid(), '00000000000000000000000000', 'ZZZZZZZZZZZZZZZZZZZZZZZZZZ']
    const inboxKeys = [`i!${A}!000000000001`, `i!${B}!ffffffffffff`, 'i!did:key:z' + 'z'.repeat(60) + '!ffffffffffff']
    for (const id of ids) {
      for (const k of inboxKeys) assert.ok(k < Bucket.dedup + id, `${k} < ${Bucket.dedup}${id}`)
    }
    const between = BUCKET_PREFIXES.filter((p) => p > Bucket.inbox && p < Bucket.dedup + '\xff' && p !== Bucket.dedup)
    assert.deepEqual(between, [], 'no bucket between the inbox and its ids')
    assert.ok(Bucket.dedup + 'ZZZZZZZZZZZZZZZZZZZZZZZZZZ' < 'j!')
  })

  it('nodes, inbox, outbox - the documented keys and value bytes', async () => {
    const nodes = new NodeStore(db, committer)
    const alpha = await nodes.create('alpha', 'external')
    const r = alpha.record
    const inbox = new InboxStore(db, committer, 100)
    const id = ulid()
    await inbox.append([{ nodeId: A, packetId: id, packet: bytes('p1') }])
    await inbox.ack(A, 1)
    const outbox = new OutboxStore(db, committer, 100)
    await outbox.load()
    const out = ulid()
    const exp = 0x0123456789a
    await committer.write(outbox.prepare(P1, out, 'did:key:zTo', 'bob', 'did:key:zFrom', exp, bytes('pk')))
    const stored = await dump(db)
    const okey = `o!${P1}!0000000000000001`
    assert.deepEqual([...stored.keys()].sort(), [`c!${A}`, `i~${id}`, `i!${A}!000000000001`, `n!${r.id}`, okey].sort())
    // the entry's expiry index record comes late (src/store/outbox-expiry.ts): a reopened outbox's load() writes it
    await new OutboxStore(db, committer, 100).load()
    const indexed = await dump(db)
    assert.equal(text(stored.get(`n!${r.id}`) as Uint8Array), JSON.stringify({ id: r.id, name: 'alpha', kind: 'external', key: r.key, created: r.created, depth: 0 }))
    const entry = stored.get(`i!${A}!000000000001`) as Uint8Array
    assert.equal(entry.byteLength, 11)
    assert.equal(entry[0], 1)
    assert.equal(text(entry.subarray(9)), 'p1')
    assert.equal(text(stored.get(`i~${id}`) as Uint8Array), `{"nodeId":"${A}","seq":1}`)
    assert.equal(text(stored.get(`c!${A}`) as Uint8Array), '1')
    const head = Buffer.alloc(12)
    head[0] = 1
    head.writeDoubleBE(exp, 1)
    head[9] = 26; head[10] = 11; head[11] = 13
    assert.equal(hex(stored.get(okey) as Uint8Array), hex(Buffer.concat([head, bytes(out), bytes('did:key:zTo'), bytes('did:key:zFrom'), bytes('pk')])))
    assert.equal(indexed.get(`e!00123456789a!${okey}`)?.byteLength, 0, 'the index record: the expiry and queue key, an empty value')
  })

  it('outbox - a dead letter is x!<at: 12 hex>!<packet id> holding a CBOR record', async () => {
    const outbox = new OutboxStore(db, committer, 100)
    await outbox.load()
    const id = ulid()
    const { ops, entry } = outbox.stage(P1, id, 'did:key:zTo', 'bob', 'did:key:zFrom', Date.now() + 60_000, bytes('pk'))
    await committer.write(ops)
    const before = Date.now()
    await outbox.kill([{ entry, code: 'EXPIRED', reason: 'test' }])
    const keys = [...(await dump(db)).keys()]
    assert.equal(keys.length, 1)
    const m = /^x!([0-9a-f]{12})!(.+)$/.exec(keys[0])
    assert.ok(m !== null, keys[0])
    assert.equal(m[2], id)
    assert.ok(parseInt(m[1], 16) >= before)
    const dead = cbor.decode<{ packetId: string, code: string }>((await dump(db)).get(keys[0]) as Uint8Array)
    assert.equal(dead.packetId, id)
    assert.equal(dead.code, 'EXPIRED')
  })

  it('acl records, peers, cards, ssh joins - the documented keys and value bytes, read back the same after a reopen', async () => {
    const acl = new AclRecords(db, committer)
    const chain = [Uint8Array.from([1, 2]), Uint8Array.from([3])]
    await acl.putHeld({ aud: A, sub: B, id: 'tok1' }, chain)
    await acl.putIssued('tok2', chain)
    await acl.putRevocation('tok1', B, Uint8Array.from([9, 9]))
    await acl.setBlock(A, B, true)
    await acl.setBlock(B, A, true)
    await acl.setBlock(B, A, false)
    await new PeerRecords(db, committer).add('/ip4/127.0.0.1/tcp/1/p2p/' + P1, 1234)
    const cards = new CardRecords(db, committer)
    await cards.put(A, { name: 'a', n: 1 })
    await cards.put(B, { name: 'b' })
    await cards.delete([B])
    await new SshJoinRecords(db, committer).put('host:22:', { destination: 'host', options: [] })
    const stored = await dump(db)
    const want: Record<string, string> = {
      [`g!h!${A}!${B}!tok1`]: '8242010241' + '03',
      'g!i!tok2': '8242010241' + '03',
      [`r!tok1!${B}`]: '0909',
      [`b!${A}!${B}`]: '01',
      [`p!/ip4/127.0.0.1/tcp/1/p2p/${P1}`]: hex(bytes('1234')),
      [`k!${A}`]: hex(bytes('{"name":"a","n":1}')),
      'j!host:22:': hex(bytes('{"destination":"host","options":[]}'))
    }
    assert.deepEqual(Object.fromEntries([...stored].map(([k, v]) => [k, hex(v)])), want)
    await reopen()
    const acl2 = new AclRecords(db, committer)
    assert.deepEqual(await drain(acl2.heldChains()), [chain])
    assert.deepEqual(await drain(acl2.issuedChains()), [chain])
    assert.deepEqual((await drain(acl2.revocations())).map(hex), ['0909'])
    assert.deepEqual(await drain(acl2.blocks()), [`${A}!${B}`])
    assert.deepEqual(await new PeerRecords(db, committer).list(), [`/ip4/127.0.0.1/tcp/1/p2p/${P1}`])
    assert.deepEqual(await drain(new CardRecords(db, committer).all()), [{ name: 'a', n: 1 }])
    assert.deepEqual(await drain(new SshJoinRecords(db, committer).all()), [{ destination: 'host', options: [] }])
  })

  it('cards, ssh joins - a stored value that is not JSON is reported and skipped, the others are read', async () => {
    await committer.write([
      { type: 'put', key: Bucket.card + A, value: bytes('{not json') },
      { type: 'put', key: Bucket.card + B, value: bytes('{"ok":true}') },
      { type: 'put', key: Bucket.sshJoin + 'a:22:', value: bytes('][') }
    ])
    const bad: unknown[] = []
    assert.deepEqual(await drain(new CardRecords(db, committer).all((e) => bad.push(e))), [{ ok: true }])
    assert.deepEqual(await drain(new SshJoinRecords(db, committer).all((e) => bad.push(e))), [])
    assert.equal(bad.length, 2)
    assert.ok(bad.every((e) => e instanceof SyntaxError))
  })

  it('AclStore - real chains, a revocation and a block go to g!h!, g!i!, r!, b! and come back after a reopen', async () => {
    const issuer = generateNodeKey()
    const holder = generateNodeKey()
    const token = encodeToken(issueToken(issuer, { aud: holder.id, sub: issuer.id, exp: Date.now() + 3_600_000 }))
    const id = tokenId(token)
    const store = new AclStore(db, committer)
    await store.load()
    await store.hold([token])
    await store.issue([token])
    const rev = encodeRevocation(issueRevocation(issuer, id))
    assert.notEqual(await store.revoke(rev), undefined)
    assert.equal(await store.revoke(rev), undefined, 'a revocation already stored is not new')
    await store.setBlock(holder.id, issuer.id, true)
    const stored = await dump(db)
    assert.deepEqual([...stored.keys()], [`b!${holder.id}!${issuer.id}`, `g!h!${holder.id}!${issuer.id}!${id}`, `g!i!${id}`, `r!${id}!${issuer.id}`])
    assert.equal(hex(stored.get(`g!i!${id}`) as Uint8Array), hex(cbor.encode([token])))
    assert.equal(hex(stored.get(`r!${id}!${issuer.id}`) as Uint8Array), hex(rev))
    await reopen()
    const again = new AclStore(db, committer)
    await again.load()
    assert.deepEqual(again.heldFor(holder.id, issuer.id).map((r) => r.id), [id])
    assert.equal(again.findIssued(id)?.aud, holder.id)
    assert.deepEqual(again.revocationsOf(id).map((r) => r.revoker), [issuer.id])
    assert.equal(again.isBlocked(holder.id, issuer.id), true)
    await again.setBlock(holder.id, issuer.id, false)
    assert.equal(stored.size - 1, (await dump(db)).size, 'an unblock deletes the b! key')
  })

  it('inbox - locate and entryById find a stored message by id, only in its own node\'s inbox, and not once pruned', async () => {
    const inbox = new InboxStore(db, committer, 100)
    const ids = [ulid(), ulid(), ulid()]
    await inbox.append(ids.slice(0, 2).map((id, k) => ({ nodeId: A, packetId: id, packet: bytes(`m${k}`) })))
    assert.deepEqual(await inbox.locate(ids[1]), { nodeId: A, seq: 2 })
    assert.equal(await inbox.locate(ids[2]), undefined)
    assert.equal(text((await inbox.entryById(A, ids[1]))?.packet ?? new Uint8Array()), 'm1')
    assert.equal((await inbox.entryById(A, ids[0]))?.seq, 1)
    assert.equal(await inbox.entryById(B, ids[1]), undefined, 'another node\'s message')
    assert.equal(await inbox.entryById(A, ids[2]), undefined, 'an unknown id')
    await inbox.ack(A, 1)
    assert.equal(await inbox.prune(A, 0, 0), 1)
    assert.deepEqual(await inbox.locate(ids[0]), { nodeId: A, seq: 1 }, 'the id is still remembered')
    assert.equal(await inbox.entryById(A, ids[0]), undefined, 'a pruned entry')
    assert.equal((await inbox.entryById(A, ids[1]))?.seq, 2)
  })
})
