// The in-memory tail a watched inbox keeps for caught-up followers: reads from
// it are exactly what the store holds (same seqs, same bytes, no gap, no
// duplicate), it stops at the newest durable entry, and it is bounded.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'
import { InboxStore, type InboxEntry } from '../../src/store/inbox.js'
import { ulid } from '../../src/util/ulid.js'

const A = 'did:key:zNodeA'
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)
const view = (es: InboxEntry[]): Array<[number, string]> => es.map((e) => [e.seq, new TextDecoder().decode(e.packet)])
const items = (n: number, tag: string): Array<{ nodeId: string, packetId: string, packet: Uint8Array }> =>
  Array.from({ length: n }, (_, i) => ({ nodeId: A, packetId: ulid(), packet: bytes(`${tag}${i}`) }))

describe('store - InboxStore in-memory tail for followers', () => {
  let dir: string
  let db: RawDb
  let inbox: InboxStore
  let store: InboxStore

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'am-tail-'))
    db = await openDb(join(dir, 'store'))
    const committer = new Committer(batchTarget(db), 'batch')
    inbox = new InboxStore(db, committer, 100_000)
    store = new InboxStore(db, committer, 100_000) // never watched: always reads the store
  })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('reads from the tail match the store, from any cursor, across concurrent appends', async () => {
    await inbox.append(items(3, 'old'))
    const unwatch = inbox.watch(A)
    await Promise.all([inbox.append(items(5, 'a')), inbox.append(items(4, 'b'))])
    await inbox.append(items(3, 'c'))
    for (const after of [0, 2, 3, 4, 8, 12, 14, 15]) {
      assert.deepEqual(view(await inbox.read(A, after, 100)), view(await store.read(A, after, 100)), `after ${after}`)
      assert.deepEqual(view(await inbox.read(A, after, 2)), view(await store.read(A, after, 2)), `after ${after}, limit 2`)
    }
    unwatch()
  })

  it('a duplicate is not added to the tail; detaching drops it', async () => {
    const unwatch = inbox.watch(A)
    const first = items(2, 'x')
    await inbox.append(first)
    await inbox.append([first[1], ...items(1, 'y')])
    assert.deepEqual(view(await inbox.read(A, 0, 10)), [[1, 'x0'], [2, 'x1'], [3, 'y0']])
    unwatch()
    unwatch()
    assert.deepEqual(view(await inbox.read(A, 0, 10)), view(await store.read(A, 0, 10)))
  })

  it('is bounded: older entries fall back to the store', async () => {
    const unwatch = inbox.watch(A)
    for (let i = 0; i < 3; i++) await inbox.append(items(600, `r${i}-`))
    const all = await store.read(A, 0, 5000)
    assert.equal(all.length, 1800)
    assert.deepEqual(view(await inbox.read(A, 0, 5000)), view(all))
    assert.deepEqual(view(await inbox.read(A, 1700, 5000)), view(all.slice(1700)))
    unwatch()
  })
})
