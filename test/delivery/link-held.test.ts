// What a link keeps of entries in flight (link-held.ts): large packets let go
// when sent (unheld) and read back from a real LevelDB outbox when their ack
// arrives (reheld), exactly the stored bytes; entries settled meanwhile keep
// none and are passed over by the settles, which store the right packet in a
// dead letter.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { OutboxStore, type OutboxEntry } from '../../src/store/outbox.js'
import { VIEW_MIN_BYTES } from '../../src/delivery/frame.js'
import { UNHELD, reheld, unheld } from '../../src/delivery/link-held.js'
import { ulid } from '../../src/util/ulid.js'

const DEST = '12D3KooWPeerOne'

function pattern (len: number, seed: number): Uint8Array {
  const out = new Uint8Array(len)
  for (let i = 0; i < len; i++) out[i] = (i * 7 + seed) & 0xff
  return out
}

describe('delivery - a link lets sent large packets go and reads them back for the ack (real LevelDB)', () => {
  let dir: string
  let db: RawDb
  let committer: Committer
  let outbox: OutboxStore

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'am-link-held-'))
    db = await openDb(join(dir, 'store'))
    committer = new Committer(batchTarget(db), 'batch')
    outbox = new OutboxStore(db, committer, 1000)
    await outbox.load()
  })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  const queue = async (sizes: number[]): Promise<{ entries: OutboxEntry[], packets: Uint8Array[] }> => {
    const entries: OutboxEntry[] = []
    const packets = sizes.map((n, k) => pattern(n, k))
    for (const p of packets) {
      const staged = outbox.stage(DEST, ulid(), 'did:key:zTo', 'bob', 'did:key:zFrom', Date.now() + 60_000, p)
      await committer.write(staged.ops)
      entries.push(staged.entry)
    }
    return { entries, packets }
  }

  it('unheld: only packets of VIEW_MIN_BYTES or more are let go; a frame of small packets is kept as it is', async () => {
    const small = await queue([10, 512, VIEW_MIN_BYTES - 1])
    assert.equal(unheld(small.entries), small.entries)
    const mixed = await queue([10, VIEW_MIN_BYTES, 65_536, 300])
    const kept = unheld(mixed.entries)
    assert.deepEqual(kept.map((e) => e.packet === UNHELD), [false, true, true, false])
    assert.deepEqual(kept.map((e) => e.key), mixed.entries.map((e) => e.key))
    assert.equal(kept[0], mixed.entries[0])
    assert.deepEqual(kept.map(({ packet: _, ...rest }) => rest), mixed.entries.map(({ packet: _, ...rest }) => rest), 'everything but the packet as it was')
  })

  it('reheld: the stored bytes of each wanted entry, UNHELD where not wanted or no longer queued; a dead letter keeps the packet', async () => {
    const { entries, packets } = await queue([65_536, 20, 70_000, 65_536, 9000])
    const kept = unheld(entries)
    const all = await reheld(kept, outbox, () => true)
    assert.deepEqual(all.map((e) => Buffer.from(e.packet)), packets.map((p) => Buffer.from(p)))
    assert.equal(all[1], kept[1], 'a held packet is not read')
    const some = await reheld(kept, outbox, (k) => k === 2)
    assert.deepEqual(some.map((e) => e.packet === UNHELD), [true, false, false, true, true])
    assert.deepEqual(Buffer.from(some[2].packet), Buffer.from(packets[2]))
    // settled meanwhile: nothing to read; the settles pass it over
    await outbox.remove([entries[0]])
    const after = await reheld(kept, outbox, () => true)
    assert.equal(after[0].packet, UNHELD)
    assert.equal(await outbox.remove([after[0]]), 0, 'settled once')
    // a rejected one becomes a dead letter with its packet, byte for byte
    const dead = await outbox.kill([{ entry: after[2], code: 'DENIED', reason: 'no grant' }, { entry: after[0], code: 'DENIED', reason: 'gone' }])
    assert.equal(dead.length, 1)
    const letters = await outbox.deadLetters(10)
    assert.equal(letters.length, 1)
    assert.deepEqual(Buffer.from(letters[0].packet), Buffer.from(packets[2]))
    assert.equal(letters[0].packetId, entries[2].packetId)
  })
})
