// A real partition inside a namespace LAN: the receiver's link is cut (no FIN,
// no RST), three times in one test. Sends during a cut are queued, the dead
// stream is detected, and everything arrives within seconds of the heal.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ControlClient } from '../../src/control/client.js'
import { BIN, waitFor } from '../utils/hosts.js'
import { canUseNetns, createLan, type Lan } from '../utils/netns.js'
import { duplicates, perPairOrdered, type Row, type Status } from './helpers.js'

interface LanDaemon { home: string, sock: string, peerId: string, addr: string }

async function call<T> (d: LanDaemon, method: string, params: object = {}): Promise<T> {
  const c = await ControlClient.connect(d.sock)
  try { return await c.request<T>(method, params) } finally { c.close() }
}

async function startIn (lan: Lan, i: number): Promise<LanDaemon> {
  const home = mkdtempSync(join(tmpdir(), 'am-lan-'))
  const ip = lan.hosts[i - 1].addr
  writeFileSync(join(home, 'config.yaml'), JSON.stringify({ listen: [`/ip4/${ip}/tcp/4747`], mdns: false }) + '\n')
  const child = lan.exec(i, process.execPath, [BIN, 'up', '--home', home, '--no-mdns'], { stdio: 'ignore' })
  child.unref()
  const sock = join(home, 'amesh.sock')
  const id = await waitFor(async () => await call<{ peerId: string }>({ home, sock, peerId: '', addr: '' }, 'id'), 30_000, `daemon in ${lan.hosts[i - 1].ns}`)
  return { home, sock, peerId: id.peerId, addr: `/ip4/${ip}/tcp/4747/p2p/${id.peerId}` }
}

describe('delivery - partition in a namespace LAN', function () {
  this.timeout(150_000)
  let lan: Lan | undefined
  const homes: string[] = []

  before(function () {
    const can = canUseNetns()
    if (!can.ok) {
      console.warn(`      skipped: ${can.reason ?? 'network namespaces unavailable'}`)
      this.skip()
    }
  })
  after(async () => {
    await lan?.down()
    for (const h of homes) rmSync(h, { recursive: true, force: true })
  })

  it('cut the receiver three times: sends are queued, the dead stream is detected, all arrive within seconds of each heal, once and in order', async () => {
    lan = await createLan('dlv', 2)
    const [a, b] = await Promise.all([startIn(lan, 1), startIn(lan, 2)])
    homes.push(a.home, b.home)
    await call(a, 'join', { addr: b.addr })
    await call(b, 'node.add', { name: 'bob' })
    await call(a, 'node.add', { name: 'alice' })
    const names = async (d: LanDaemon): Promise<string[]> => (await call<Array<{ name: string }>>(d, 'nodes')).map((n) => n.name)
    await waitFor(async () => (await names(b)).includes('alice') && (await names(a)).includes('bob'), 30_000, 'cards')
    const g = await call<{ token_id: string }>(b, 'grant', { as: 'bob', to: 'alice', signals: ['MESSAGE'] })
    await waitFor(async () => (await call<{ held: Array<{ token_id: string }> }>(a, 'grants')).held.some((t) => t.token_id === g.token_id), 20_000, 'grant held')
    const rows = async (): Promise<Row[]> => await call<Row[]>(b, 'inbox.read', { node: 'bob', after: 0, limit: 10_000 })
    const link = async (): Promise<string | undefined> => (await call<Status>(a, 'status')).links[b.peerId]

    const sent: string[] = []
    const send = async (text: string): Promise<void> => { sent.push((await call<{ id: string }>(a, 'send', { as: 'alice', to: 'bob', text })).id) }
    let n = 0
    for (let i = 0; i < 10; i++) await send(`alice ${n++}`)
    await waitFor(async () => (await rows()).length === sent.length || undefined, 20_000, 'warm-up delivery')
    assert.equal(await link(), 'open')

    for (let round = 1; round <= 3; round++) {
      await lan.cut(2)
      const before = (await rows()).length
      for (let i = 0; i < 30; i++) await send(`alice ${n++}`)
      const cutAt = Date.now()
      await waitFor(async () => (await link()) !== 'open' || undefined, 20_000, `round ${round}: the dead stream to be detected`)
      const detectMs = Date.now() - cutAt
      const st = await call<Status>(a, 'status')
      assert.ok(st.outbox.queued >= 30, `round ${round}: sends during the cut are queued (${st.outbox.queued})`)
      assert.equal((await rows()).length, before, `round ${round}: nothing crossed the cut`)
      await lan.heal(2)
      const healedAt = Date.now()
      await waitFor(async () => (await rows()).length >= sent.length || undefined, 20_000, `round ${round}: delivery after heal`)
      const healMs = Date.now() - healedAt
      assert.ok(detectMs < 15_000, `round ${round}: dead stream detected in ${detectMs} ms`)
      assert.ok(healMs < 12_000, `round ${round}: delivered ${healMs} ms after heal`)
    }
    await waitFor(async () => (await call<Status>(a, 'status')).outbox.queued === 0 || undefined, 10_000, 'outbox to drain')
    const all = await rows()
    assert.deepEqual(all.map((r) => r.id), sent, 'each exactly once, in send order')
    assert.deepEqual(duplicates(all.map((r) => r.id)), [])
    assert.ok(perPairOrdered(all.map((r) => r.payload.text ?? '')))
  })
})
