// send.batch through real daemons: entry order kept (local inbox and a
// remote host), each entry authorized and checked like a `send` with its own
// named error and nothing stored for it, the bounds refuse the whole call,
// and what the reply called durable survives kill -9 of the daemon.
import { strict as assert } from 'node:assert'
import type { ControlClient } from '../../src/control/client.js'
import { MAX_BATCH_CHARS, MAX_BATCH_SENDS, type ResultOf } from '../../src/control/methods.js'
import { jsonLines, spawnAmesh, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { processAlive } from '../../src/util/process-alive.js'

interface Row { seq: number, id: string, from: string, signal: string, payload: { text?: string, context?: string } }
type Results = ResultOf<'send.batch'>['results']

async function inbox (h: TestHost, node: string): Promise<Row[]> {
  return jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
}

function ids (results: Results): string[] {
  return results.map((r, k) => {
    if ('error' in r) throw new Error(`entry ${k}: ${r.error.code}: ${r.error.message}`)
    return r.id
  })
}

async function waitGone (pid: number): Promise<void> {
  await waitFor(async () => processAlive(pid) ? undefined : true, 10_000, `pid ${pid} to exit`)
}

describe('control - send.batch', function () {
  this.timeout(120_000)
  const hosts: TestHost[] = []
  const clients: ControlClient[] = []
  const host = async (peers: string[] = []): Promise<TestHost> => { const h = await startHost({ peers }); hosts.push(h); return h }
  const client = async (h: TestHost): Promise<ControlClient> => { const c = await h.client(); clients.push(c); return c }

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close()
    for (const h of hosts.splice(0)) await h.cleanup()
  })

  it('stores the entries in their order, answers one result per entry in order, and a kill -9 after the reply loses none', async () => {
    const h = await host()
    const c = await client(h)
    await c.call('node.add', { name: 'bob' })
    await c.call('node.add', { name: 'al', parent: 'bob' })
    const texts = Array.from({ length: 700 }, (_, i) => `line ${i} "é"`)
    const r = await c.call('send.batch', { sends: texts.map((text) => ({ as: 'al', to: 'bob', text })) })
    assert.equal(r.results.length, texts.length)
    assert.ok(r.results.every((x) => !('error' in x) && x.state === 'delivered'))
    const sent = ids(r.results)
    h.kill9()
    await waitGone(h.pid)
    await h.start()
    const rows = await inbox(h, 'bob')
    assert.deepEqual(rows.map((x) => x.id), sent, 'every entry once, in entry order')
    assert.deepEqual(rows.map((x) => x.payload.text), texts)
    assert.deepEqual(rows.map((x) => x.seq), rows.map((_, i) => i + 1))
  })

  it('gives a bad entry its own named error and stores nothing for it; the good entries around it are stored in order', async () => {
    const h = await host()
    const c = await client(h)
    await c.call('node.add', { name: 'bob' })
    await c.call('node.add', { name: 'al', parent: 'bob' })
    await c.call('node.add', { name: 'eve' }) // another root: no grant from bob
    const r = await c.call('send.batch', {
      sends: [
        { as: 'al', to: 'bob', text: 'good 1' },
        { as: 'al', text: 'no target' },
        'not an object',
        { as: 'al', to: 'bob', text: 'x', colour: 'red' },
        { as: 'eve', to: 'bob', text: 'not granted' },
        { as: 'al', to: 'bob', text: 'good 2' },
        { as: 'al', to: 'bob', signal: 'SHOUT', text: 'unknown signal' },
        { as: 'al', to: 'bob', text: 'good 3' }
      ]
    })
    const codes = r.results.map((x) => 'error' in x ? x.error.code : x.state)
    assert.deepEqual(codes, ['delivered', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'ACCESS_DENIED', 'delivered', 'INVALID_ARGUMENT', 'delivered'])
    for (const x of r.results) if ('error' in x) assert.ok(x.error.message.length > 0)
    const all = await inbox(h, 'bob')
    // as for a single send, the refused sender is reported to bob in an ERROR notice (not the packet)
    const notices = all.filter((x) => x.signal === 'ERROR')
    assert.equal(notices.length, 1)
    assert.match(notices[0].payload.context ?? '', /eve .* tried to send MESSAGE/)
    const rows = all.filter((x) => x.signal !== 'ERROR')
    assert.deepEqual(rows.map((x) => x.payload.text), ['good 1', 'good 2', 'good 3'])
    assert.deepEqual(rows.map((x) => x.id), [0, 5, 7].map((k) => (r.results[k] as { id: string }).id))
  })

  it('refuses a call over the bounds whole (BATCH_TOO_LARGE), storing nothing', async () => {
    const h = await host()
    const c = await client(h)
    await c.call('node.add', { name: 'bob' })
    await c.call('node.add', { name: 'al', parent: 'bob' })
    const one = { as: 'al', to: 'bob', text: 'x' }
    await assert.rejects(c.call('send.batch', { sends: Array.from({ length: MAX_BATCH_SENDS + 1 }, () => one) }), (e: { code?: string }) => e.code === 'BATCH_TOO_LARGE')
    const big = 'y'.repeat(Math.ceil(MAX_BATCH_CHARS / 4) + 1)
    await assert.rejects(c.call('send.batch', { sends: [1, 2, 3, 4].map(() => ({ ...one, text: big })) }), (e: { code?: string }) => e.code === 'BATCH_TOO_LARGE')
    await assert.rejects(c.call('send.batch', { sends: [] }), (e: { code?: string }) => e.code === 'INVALID_ARGUMENT')
    assert.deepEqual(await inbox(h, 'bob'), [])
    const r = await c.call('send.batch', { sends: Array.from({ length: MAX_BATCH_SENDS }, () => one) })
    assert.equal(ids(r.results).length, MAX_BATCH_SENDS, 'exactly the bound is accepted')
  })

  it('to a remote host: queued durably in entry order (sender killed -9 while the receiver is down), delivered once each in that order', async () => {
    const b = await host()
    const a = await host([b.addr])
    await a.ok(['node', 'add', 'alice'])
    await b.ok(['node', 'add', 'bob'])
    await waitFor(async () => (await a.ok(['nodes', '--json'])).includes('"bob"'), 20_000, 'a to learn bob')
    await waitFor(async () => (await b.ok(['nodes', '--json'])).includes('"alice"'), 20_000, 'b to learn alice')
    await b.ok(['grant', '--as', 'bob', '--to', 'alice'])
    await b.stop()
    const c = await a.client()
    const texts = Array.from({ length: 300 }, (_, i) => `remote ${i}`)
    const r = await c.call('send.batch', { sends: texts.map((text) => ({ as: 'alice', to: 'bob', text })) })
    const sent = ids(r.results)
    assert.ok(r.results.every((x) => !('error' in x) && x.state === 'queued'))
    c.close()
    a.kill9()
    await waitGone(a.pid)
    await b.start()
    await a.start()
    await waitFor(async () => (await inbox(b, 'bob')).length >= texts.length || undefined, 60_000, 'the batch to arrive')
    const rows = await inbox(b, 'bob')
    assert.deepEqual(rows.map((x) => x.id), sent, 'every entry once, in entry order')
    assert.deepEqual(rows.map((x) => x.payload.text), texts)
  })

  it('amesh send - sends the lines in batches, in order, one result line each', async () => {
    const h = await host()
    await h.ok(['node', 'add', 'bob'])
    await h.ok(['node', 'add', 'al', '--parent', 'bob'])
    const lines = Array.from({ length: 2500 }, (_, i) => `stdin ${i}`)
    const out = jsonLines<{ id: string, state: string }>(await h.ok(['send', '--as', 'al', 'bob', '-'], { input: lines.join('\n') + '\n' }))
    assert.equal(out.length, lines.length)
    const rows = await inbox(h, 'bob')
    assert.deepEqual(rows.map((x) => x.payload.text), lines)
    assert.deepEqual(rows.map((x) => x.id), out.map((x) => x.id))
    // amesh inbox --follow (binary pages rendered by the CLI) prints what amesh inbox (one inbox.read frame rendered by the CLI) prints
    const read = (await h.ok(['inbox', 'bob', '--after', '0', '--limit', '10000'])).trimEnd().split('\n')
    assert.equal(read.length, lines.length)
    const follow = spawnAmesh(['inbox', 'bob', '--after', '0', '--follow', '--home', h.home])
    let text = ''
    follow.stdout.on('data', (b: Buffer) => { text += b.toString('utf8') })
    try {
      await waitFor(async () => text.split('\n').length > lines.length || undefined, 60_000, 'inbox --follow to print every packet')
    } finally {
      follow.kill('SIGKILL')
    }
    assert.deepEqual(text.trimEnd().split('\n'), read)
  })
})
