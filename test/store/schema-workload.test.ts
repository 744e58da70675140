import { strict as assert } from 'node:assert'
import { join } from 'node:path'
import { openDb } from '../../src/store/db.js'
import { bucketOf, type BucketName } from '../../src/store/schema.js'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'

interface Row { seq: number, id: string, signal: string, conversation_id?: string, in_reply_to?: string, payload: { text?: string } }

/** The buckets of every key in a stopped host's store, and the keys that fall in none. */
async function bucketsIn (h: TestHost): Promise<{ seen: Set<BucketName>, unlisted: string[] }> {
  const db = await openDb(join(h.home, 'store'))
  const seen = new Set<BucketName>()
  const unlisted: string[] = []
  try {
    for await (const key of db.keys()) {
      const b = bucketOf(key)
      if (b === undefined) unlisted.push(key)
      else seen.add(b)
    }
  } finally {
    await db.close()
  }
  return { seen, unlisted }
}

async function sent (h: TestHost, args: string[]): Promise<{ id: string, state: string }> {
  return JSON.parse(await h.ok(['send', ...args, '--json'])) as { id: string, state: string }
}

describe('store - every key a daemon writes is in a bucket of the schema', function () {
  this.timeout(120_000)
  let h1: TestHost
  let h2: TestHost

  before(async () => {
    h1 = await startHost()
    h2 = await startHost()
  })

  after(async () => {
    await h1?.cleanup()
    await h2?.cleanup()
  })

  it('nodes, lineage, local and remote messages, replies, acks, grants, a revocation, a block, a joined peer, cards, a queued packet', async () => {
    await h2.ok(['join', h1.addr])
    await h1.ok(['node', 'add', 'alice'])
    await h1.ok(['node', 'add', 'lead'])
    await h1.ok(['node', 'add', 'w1', '--parent', 'lead'])
    await h2.ok(['node', 'add', 'bob'])
    await waitFor(async () => (await h2.ok(['nodes', '--json'])).includes('"alice"'), 20_000, 'h2 to learn alice')
    await waitFor(async () => (await h1.ok(['nodes', '--json'])).includes('"bob"'), 20_000, 'h1 to learn bob')
    await h2.ok(['grant', '--as', 'bob', '--to', 'alice'])
    await h1.ok(['grant', '--as', 'alice', '--to', 'bob'])
    const spare = JSON.parse(await h2.ok(['grant', '--as', 'bob', '--to', 'alice', '--json'])) as { token_id: string }
    await h2.ok(['revoke', spare.token_id, '--as', 'bob'])
    const first = await sent(h1, ['--as', 'lead', 'w1', 'local'])
    await sent(h1, ['--as', 'w1', 'lead', 'reply', '--reply-to', first.id])
    const atLead = jsonLines<Row>(await h1.ok(['inbox', 'lead', '--json', '--after', '0']))
    assert.deepEqual(atLead.map((r) => [r.payload.text, r.in_reply_to, r.conversation_id]), [['reply', first.id, first.id]])
    await h1.ok(['ack', 'w1', '1'])
    await h1.ok(['block', '--as', 'lead', 'alice'])
    await sent(h1, ['--as', 'alice', 'bob', 'remote'])
    await waitFor(async () => jsonLines<Row>(await h2.ok(['inbox', 'bob', '--json', '--after', '0'])).some((r) => r.payload.text === 'remote'), 20_000, 'bob to receive')
    await h2.stop()
    assert.equal((await sent(h1, ['--as', 'alice', 'bob', 'queued while bob\'s host is down'])).state, 'queued')
    await h1.stop()
    // a queued entry's expiry index record comes late: the restart's load() writes it (src/store/outbox-expiry.ts)
    await h1.start()
    await h1.stop()
    const one = await bucketsIn(h1)
    const two = await bucketsIn(h2)
    assert.deepEqual(one.unlisted, [])
    assert.deepEqual(two.unlisted, [])
    for (const b of ['node', 'inbox', 'cursor', 'dedup', 'outbox', 'expiry', 'heldGrant', 'issuedGrant', 'block', 'card'] as const) assert.ok(one.seen.has(b), `h1 wrote ${b}`)
    for (const b of ['node', 'inbox', 'dedup', 'heldGrant', 'issuedGrant', 'revocation', 'peer', 'card'] as const) assert.ok(two.seen.has(b), `h2 wrote ${b}`)
  })
})
