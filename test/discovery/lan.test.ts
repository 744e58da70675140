// Three hosts in a namespace LAN, each started with plain `amesh up` (no
// config, no peers, mDNS on by default): they find each other, list each
// other's nodes, and a message from host 1 reaches host 3 by name.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canUseNetns, createLan, type Lan } from '../utils/netns.js'
import { amesh, jsonLines } from './netns-cli.js'
import { until } from './hosts.js'

interface NodeRow { name: string, id: string, kind: string, host: string, local: boolean }
interface Packet { from: string, to: string, payload: { text?: string } }

describe('discovery - zero-config LAN (namespaces)', function () {
  this.timeout(120_000)
  let lan: Lan | undefined
  const homes: string[] = []

  before(async function () {
    const can = canUseNetns()
    if (!can.ok) {
      process.stderr.write(`skipping namespace LAN discovery tests: ${can.reason ?? ''}\n`)
      this.skip()
    }
    lan = await createLan('disc', 3)
    for (let i = 1; i <= 3; i++) homes.push(mkdtempSync(join(tmpdir(), `aml${i}-`)))
  })

  after(async () => {
    if (lan !== undefined) {
      await Promise.all(homes.map(async (h, i) => await amesh(lan as Lan, i + 1, h, ['down'], true).catch(() => undefined)))
      await lan.down()
    }
    for (const h of homes) rmSync(h, { recursive: true, force: true })
  })

  it('lan - plain amesh up: hosts list each other\'s nodes and deliver by name', async () => {
    const l = lan as Lan
    for (let i = 1; i <= 3; i++) {
      const up = await amesh(l, i, homes[i - 1], ['up', '--detach', '--json'])
      const id = JSON.parse(up.stdout) as { addrs: string[] }
      // the default listen address is 0.0.0.0:4747; loopback is not announced to the LAN
      assert.ok(id.addrs.every((a) => a.startsWith(`/ip4/${l.hosts[i - 1].addr}/tcp/4747/`)), JSON.stringify(id.addrs))
      await amesh(l, i, homes[i - 1], ['node', 'add', `n${i}`])
    }
    const started = Date.now()
    for (let i = 1; i <= 3; i++) {
      await until(`host ${i} to list n1, n2 and n3`, async () => {
        const rows = jsonLines<NodeRow>((await amesh(l, i, homes[i - 1], ['nodes', '--json'])).stdout)
        const names = rows.map((r) => r.name).sort()
        return ['n1', 'n2', 'n3'].every((n) => names.includes(n)) ? rows : undefined
      }, 20_000, 250)
    }
    assert.ok(Date.now() - started < 20_000)
    const rows = jsonLines<NodeRow>((await amesh(l, 1, homes[0], ['nodes', '--json'])).stdout)
    assert.equal(rows.find((r) => r.name === 'n3')?.local, false)
    // grant n1 the right to message n3 (the ACL is not the subject here), then send by name
    await amesh(l, 3, homes[2], ['grant', '--as', 'n3', '--to', 'n1', '--signals', 'MESSAGE'])
    await until('the send to be authorised', async () => (await amesh(l, 1, homes[0], ['send', '--as', 'n1', 'n3', 'hello over the LAN', '--json'])).stdout, 15_000, 250)
    const got = await until('the message at n3', async () => {
      const p = jsonLines<Packet>((await amesh(l, 3, homes[2], ['inbox', 'n3', '--json'])).stdout)
      return p.length > 0 ? p : undefined
    }, 15_000, 250)
    assert.equal(got.length, 1)
    assert.equal(got[0].from, 'n1')
    assert.equal(got[0].payload.text, 'hello over the LAN')
  })
})
