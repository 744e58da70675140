// Message text arrives as it was sent, or is refused by name:
// - a text that starts with U+FEFF (a byte order mark) arrives with it: sent
//   by the CLI (argv, stdin lines, --file) from one real host to another, read
//   back by every reader (inbox --json, inbox.read, inbox.follow as NDJSON and
//   as binary pages), also after the receiver restarts. dag-cbor's own decoder
//   used to drop the mark, so these texts arrived without it;
// - a string with a lone surrogate (which has no UTF-8 form; JSON on the
//   control socket can carry one) is refused with INVALID_PACKET and nothing
//   is stored for it, where it used to be stored as U+FFFD.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderFollowPage } from '../../src/control/follow-frames.js'
import { jsonLines, meetNodes, startHost, waitFor, type TestHost } from '../utils/hosts.js'

interface Row { seq: number, from: string, payload: { text?: string, context?: unknown } }

const ARGV = '\ufeffone'
const LINES = ['\ufeff\ufefftwo', '\ufeffthree', 'four \ufeff inside']
const FILE = '\ufefffive\nsecond line\n'
const CONTEXT = { '\ufeffkey': ['\ufeff', '\ufeffvalue'] }
const TEXTS = [ARGV, ...LINES, FILE, 'six']

describe('e2e - message text is delivered as sent (a leading U+FEFF kept) or refused by name (a lone surrogate)', function () {
  this.timeout(120_000)
  let h1: TestHost
  let h2: TestHost
  let dir: string

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'am-bom-'))
    h1 = await startHost()
    h2 = await startHost({ peers: [h1.addr] })
    await meetNodes(h1, 'alice', h2, 'bob')
    await h2.ok(['grant', '--as', 'bob', '--to', 'alice'])
  })

  after(async () => {
    await h2?.cleanup()
    await h1?.cleanup()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  async function rows (): Promise<Row[]> {
    return jsonLines<Row>(await h2.ok(['inbox', 'bob', '--json', '--after', '0']))
  }

  it('arrives with the mark, once each and in order, through every reader, and again after a restart', async () => {
    await h1.ok(['send', '--as', 'alice', 'bob', ARGV])
    await h1.ok(['send', '--as', 'alice', 'bob', '-'], { input: LINES.map((l, i) => i === 1 ? `${l}\r\n` : `${l}\n`).join('') })
    const file = join(dir, 'text.txt')
    writeFileSync(file, FILE)
    await h1.ok(['send', '--as', 'alice', 'bob', '--file', file])
    await h1.ok(['send', '--as', 'alice', 'bob', 'six', '--context-json', JSON.stringify(CONTEXT)])
    const got = await waitFor(async () => { const r = await rows(); return r.length >= TEXTS.length ? r : undefined }, 30_000, 'all six messages at bob')
    assert.deepEqual(got.map((r) => r.payload.text), TEXTS, 'each text byte for byte, in send order')
    assert.deepEqual(got.map((r) => r.seq), [1, 2, 3, 4, 5, 6], 'each once')
    assert.deepEqual(got[5].payload.context, CONTEXT, 'marks in a structured context: keys and values')

    const c = await h2.client()
    try {
      const read = await c.call('inbox.read', { node: 'bob', after: 0, limit: 100 }) as Row[]
      assert.deepEqual(read, got, 'inbox.read')
      const ndjson: Row[] = []
      const binary: Row[] = []
      const f1 = await h2.client()
      const f2 = await h2.client()
      const d1 = f1.stream('inbox.follow', { node: 'bob', after: 0 }, (e) => { ndjson.push(e as Row) }).catch(() => {})
      const d2 = f2.frames('inbox.follow', { node: 'bob', after: 0 }, (body) => { binary.push(...renderFollowPage(body) as unknown as Row[]) }).catch(() => {})
      await waitFor(async () => (ndjson.length >= 6 && binary.length >= 6) || undefined, 20_000, 'both follows')
      f1.close()
      f2.close()
      await Promise.all([d1, d2])
      assert.deepEqual(ndjson, got, 'inbox.follow, NDJSON')
      assert.deepEqual(binary, got, 'inbox.follow, binary pages')
    } finally {
      c.close()
    }

    await h2.stop()
    await h2.start()
    assert.deepEqual(await rows(), got, 'the same after the receiver restarts')
  })

  it('refuses a lone surrogate in the text, a context key or value, or an option, by name, and stores nothing for it', async () => {
    const before = (await rows()).length
    const c = await h1.client()
    try {
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ text: 'half \ud800 pair' }, /packet\.payload\.text holds a lone surrogate \(U\+D800\) at index 5/],
        [{ text: '\udc00 first' }, /packet\.payload\.text holds a lone surrogate \(U\+DC00\) at index 0/],
        [{ text: 'ok', payload: { context: { 'k\udbff': 1 } } }, /packet\.payload\.context key holds a lone surrogate/],
        [{ text: 'ok', payload: { context: ['fine', 'end \ud83d'] } }, /packet\.payload\.context holds a lone surrogate \(U\+D83D\)/],
        [{ text: 'ok', signal: 'ESCALATE', payload: { options: ['yes', 'n\udc00o'] } }, /packet\.payload\.options: an option holds a lone surrogate/]
      ]
      for (const [params, message] of bad) {
        await assert.rejects(c.call('send', { as: 'alice', to: 'bob', ...params }), (err: Error & { code?: string }) => err.code === 'INVALID_PACKET' && message.test(err.message), JSON.stringify(params))
      }
      // in a batch each entry is answered on its own: the bad one refused, the others sent in order
      const r = await c.call('send.batch', { sends: [{ as: 'alice', to: 'bob', text: 'batch one 😀' }, { as: 'alice', to: 'bob', text: 'bad \ud800' }, { as: 'alice', to: 'bob', text: 'batch three' }] })
      assert.deepEqual(r.results.map((x) => 'error' in x ? x.error.code : x.state), ['queued', 'INVALID_PACKET', 'queued'])
    } finally {
      c.close()
    }
    const after = await waitFor(async () => { const r = await rows(); return r.length >= before + 2 ? r : undefined }, 30_000, 'the two good batch entries at bob')
    await new Promise((resolve) => setTimeout(resolve, 500))
    const final = await rows()
    assert.equal(final.length, before + 2, 'nothing arrived for the refused sends')
    assert.deepEqual(final.slice(before).map((x) => x.payload.text), ['batch one 😀', 'batch three'])
    assert.equal(after.length, before + 2)
  })
})
