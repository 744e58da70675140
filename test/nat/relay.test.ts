// Two hosts, each in its own private LAN behind a masquerading router (no
// inbound forwarding), and relays on the "public" segment — all real network
// namespaces and real bin/amesh daemons. The NAT'd hosts know only the relay's
// address; they reserve slots on it, publish their relayed addresses in their
// cards, resolve each other's nodes by name and deliver through the relay.
import { strict as assert } from 'node:assert'
import { canUseNat, createNat, type Nat } from '../utils/netns-nat.js'
import { BIN } from '../discovery/netns-cli.js'
import { am, inbox, newHome, numbered, readLog, received, removeHomes, startHost, status, stopAll, until, type NatHost } from './harness.js'

const SMALL_LIMITS = { duration: '15s', data: 1024 * 1024 }
/**
 * The hosts' relay.retry: the same retries as the defaults (a refused host asks again, doubling;
 * a lost relay is redialled, doubling), seconds apart instead of 30 s to 2 min and 5 s to 1 min.
 */
const SHORT_RETRY = { refused: '1s', refused_max: '4s', failed: '1s', check: '1s', redial: '500ms', redial_max: '2s' }

function lines (prefix: string, n: number, pad = ''): string[] {
  return Array.from({ length: n }, (_, i) => numbered(prefix, i, pad))
}

describe('nat - circuit relay between two NAT\'d LANs (namespaces)', function () {
  this.timeout(240_000)
  let nat: Nat | undefined
  const homes: string[] = []
  const hosts: Record<'relay' | 'relay2' | 'h1' | 'h2', NatHost> = {} as never

  /** `send --as FROM TO -` fed one line per message, paced over `spreadMs`; resolves when the CLI exits. */
  async function pacedSend (h: NatHost, from: string, to: string, texts: string[], spreadMs: number): Promise<void> {
    const child = (nat as Nat).exec(h.role, process.execPath, [BIN, 'send', '--as', from, to, '-', '--home', h.home], { stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
    const done = new Promise<number | null>((resolve) => child.on('close', resolve))
    const perTick = Math.max(1, Math.ceil(texts.length / Math.max(1, spreadMs / 250)))
    for (let i = 0; i < texts.length; i += perTick) {
      child.stdin?.write(texts.slice(i, i + perTick).join('\n') + '\n')
      if (spreadMs > 0) await new Promise((resolve) => setTimeout(resolve, 250))
    }
    child.stdin?.end()
    const code = await done
    assert.equal(code, 0, `send - exited ${String(code)}: ${stderr}`)
  }

  /**
   * h1's connection to h2 as `peers --json` and `status` both show it. The relay's small
   * limits (the whole file) cut an idle circuit after 15 s, and nothing re-opens it until
   * there is traffic: while h1 has no connection to h2, a probe message makes one.
   */
  async function connectedToH2 (n: Nat): Promise<{ toH2: { peer: string, relayed: boolean, encryption?: string }, viaStatus: unknown }> {
    let probes = 0
    return await until('h1 to be connected to h2 (peers and status)', async () => {
      const peers = JSON.parse((await am(n, 'h1', hosts.h1.home, ['peers', '--json'])).stdout) as { connected: Array<{ peer: string, relayed: boolean, encryption?: string }> }
      const toH2 = peers.connected.find((c) => c.peer === hosts.h2.peerId)
      const viaStatus = (await status(n, hosts.h1)).connections.find((c) => c.peer === hosts.h2.peerId)
      if (toH2 !== undefined && viaStatus !== undefined) return { toH2, viaStatus }
      await am(n, 'h1', hosts.h1.home, ['send', '--as', 'alice', 'bob', `probe-${probes++}`])
      return undefined
    }, 60_000, 1000)
  }

  before(async function () {
    const can = canUseNat()
    if (!can.ok) { process.stderr.write(`skipping NAT relay tests: ${can.reason ?? ''}\n`); this.skip() }
    this.timeout(420_000)
    nat = await createNat('r', 2)
    const relayHome = newHome('relay', { relay: { serve: true, limits: SMALL_LIMITS, retry: SHORT_RETRY } })
    homes.push(relayHome)
    hosts.relay = await startHost(nat, 'relay', relayHome)
    const relay2Home = newHome('relay2', { relay: { serve: true, accept: 'granted', retry: SHORT_RETRY }, peers: [hosts.relay.addr] })
    homes.push(relay2Home)
    hosts.relay2 = await startHost(nat, 'relay2', relay2Home)
    for (const [role, node] of [['h1', 'alice'], ['h2', 'bob']] as const) {
      const home = newHome(role, { peers: [hosts.relay.addr], relay: { retry: SHORT_RETRY } })
      homes.push(home)
      hosts[role] = await startHost(nat, role, home)
      await am(nat, role, home, ['node', 'add', node])
    }
    for (const role of ['h1', 'h2'] as const) {
      await until(`${role} to reserve on the relay and know it is behind a NAT`, async () => {
        const s = await status(nat as Nat, hosts[role])
        return s.reachability === 'private' && s.relays.some((r) => r.peer === hosts.relay.peerId) ? s : undefined
      }, 60_000)
    }
    // each node may message the other (the ACL is not the subject here); granting resolves the other by name
    const grant = async (role: 'h1' | 'h2', as: string, to: string): Promise<string> => {
      const r = await until(`${as} to grant ${to}`, async () => await am(nat as Nat, role, hosts[role].home, ['grant', '--as', as, '--to', to, '--signals', 'MESSAGE', '--json']), 60_000, 1000)
      return (JSON.parse(r.stdout) as { token_id: string }).token_id
    }
    const toAlice = await grant('h2', 'bob', 'alice')
    const toBob = await grant('h1', 'alice', 'bob')
    // a grant is handed to the grantee's host through the relay (retried while that fails):
    // the sends below need it held there, not just issued
    await until('h1 to hold bob\'s grant', async () => (await am(nat as Nat, 'h1', hosts.h1.home, ['grants', '--json'])).stdout.includes(toAlice), 120_000, 1000)
    await until('h2 to hold alice\'s grant', async () => (await am(nat as Nat, 'h2', hosts.h2.home, ['grants', '--json'])).stdout.includes(toBob), 120_000, 1000)
  })

  after(async function () {
    this.timeout(60_000)
    if (nat !== undefined) {
      await stopAll(nat, Object.values(hosts))
      await nat.down()
    }
    removeHomes(homes)
  })

  it('nat - hosts behind two NATs, knowing only the relay, exchange 1,000 messages both ways through it: each once, in order', async () => {
    const n = nat as Nat
    const a2b = lines('a2b-', 1000)
    const b2a = lines('b2a-', 1000)
    await Promise.all([pacedSend(hosts.h1, 'alice', 'bob', a2b, 0), pacedSend(hosts.h2, 'bob', 'alice', b2a, 0)])
    assert.deepEqual(await received(n, hosts.h2, 'bob', 'a2b-', 1000, 120_000), a2b)
    assert.deepEqual(await received(n, hosts.h1, 'alice', 'b2a-', 1000, 120_000), b2a)
    // the hosts' connection to each other is relayed, and Noise-encrypted end to end between the two hosts
    const { toH2, viaStatus } = await connectedToH2(n)
    assert.equal(toH2.relayed, true, JSON.stringify(toH2))
    assert.equal(toH2.encryption, '/noise')
    assert.deepEqual(viaStatus, { peer: hosts.h2.peerId, via: 'relayed', relay: hosts.relay.peerId })
    await until('h1 outbox to drain (the probes)', async () => (await status(n, hosts.h1)).queued === 0, 60_000)
    const served = await status(n, hosts.relay)
    assert.deepEqual(served.serving?.reservations.map((r) => r.peer).sort(), [hosts.h1.peerId, hosts.h2.peerId].sort())
  })

  it('nat - relay stopped, no other path: the send is queued, not lost, and delivered once when the relay is back', async () => {
    const n = nat as Nat
    const logFrom = readLog(hosts.h1).length
    await am(n, 'relay', hosts.relay.home, ['down'])
    await until('h1 to lose its relayed connection to h2', async () => (await status(n, hosts.h1)).connections.every((c) => c.peer !== hosts.h2.peerId), 30_000)
    const texts = lines('offline-', 5)
    for (const t of texts) {
      const r = JSON.parse((await am(n, 'h1', hosts.h1.home, ['send', '--as', 'alice', 'bob', t, '--json'])).stdout) as { state: string }
      assert.equal(r.state, 'queued')
    }
    await new Promise((resolve) => setTimeout(resolve, 3000))
    assert.equal((await status(n, hosts.h1)).queued, 5)
    assert.equal((await inbox(n, hosts.h2, 'bob')).filter((p) => p.payload.text?.startsWith('offline-') === true).length, 0)
    hosts.relay = await startHost(n, 'relay', hosts.relay.home)
    assert.deepEqual(await received(n, hosts.h2, 'bob', 'offline-', 5, 150_000), texts)
    await until('h1 outbox to drain', async () => (await status(n, hosts.h1)).queued === 0, 30_000)
    // h1 redialled the stopped relay as a bootstrap peer with relay.retry's backoff: 500 ms, then 1 s, doubling to 2 s
    const waits = [...readLog(hosts.h1).slice(logFrom).matchAll(new RegExp(`bootstrap peer ${hosts.relay.peerId} unreachable \\(next try in ([0-9.]+) s\\)`, 'g'))].map((m) => Number(m[1]))
    assert.deepEqual(waits.slice(0, 2), [1, 2], `redial waits ${waits.join(', ')}`)
    assert.ok(waits.every((w) => w <= 2), `redial waits ${waits.join(', ')}`)
  })

  it('nat - a relay that accepts only granted hosts refuses an unaccepted host, with the reason in its status and log', async () => {
    const n = nat as Nat
    await am(n, 'h1', hosts.h1.home, ['join', hosts.relay2.addr])
    const s = await until('h1 to be refused by relay2', async () => {
      const st = await status(n, hosts.h1)
      return st.refused.some((r) => r.relay === hosts.relay2.peerId && r.reason.startsWith('PERMISSION_DENIED')) ? st : undefined
    }, 90_000, 1000)
    const refusal = s.refused.find((r) => r.relay === hosts.relay2.peerId)
    assert.match(refusal?.reason ?? '', /PERMISSION_DENIED: the relay accepts only hosts its operator granted/)
    assert.ok(!s.relays.some((r) => r.peer === hosts.relay2.peerId))
    assert.match(readLog(hosts.h1), new RegExp(`relay: refused reservation on ${hosts.relay2.peerId}: PERMISSION_DENIED`))
    assert.match(readLog(hosts.relay2), new RegExp(`relay: refused a reservation from ${hosts.h1.peerId}`))
    assert.deepEqual((await status(n, hosts.relay2)).serving?.reservations, [])
  })

  it('nat - a relayed link outlives the relay limits (15 s, 1 MiB): 10 MiB over 60 s arrive once, in order, across re-established connections', async () => {
    const n = nat as Nat
    const texts = lines('big-', 1000, '.' + 'x'.repeat(10 * 1024))
    await pacedSend(hosts.h1, 'alice', 'bob', texts, 60_000)
    const got = await received(n, hosts.h2, 'bob', 'big-', 1000, 150_000)
    assert.equal(got.length, 1000)
    assert.ok(got.every((t, i) => t === texts[i]), 'in order, each once')
  })

  it('nat - kill -9 of the relay mid-stream, a second relay known: delivery resumes through it, nothing lost or duplicated', async () => {
    const n = nat as Nat
    // relay2's operator accepts both hosts (a host grant of /relay/reserve to one of each host's nodes)
    for (const node of ['alice', 'bob']) {
      await until(`relay2 to grant ${node}`, async () => await am(n, 'relay2', hosts.relay2.home, ['grant', '--host', '--to', node, '--cmd', '/relay/reserve']), 60_000, 1000)
    }
    await am(n, 'h2', hosts.h2.home, ['join', hosts.relay2.addr])
    for (const role of ['h1', 'h2'] as const) {
      await until(`${role} to reserve on relay2 as well`, async () => {
        const s = await status(n, hosts[role])
        return s.relays.some((r) => r.peer === hosts.relay2.peerId) && s.relays.some((r) => r.peer === hosts.relay.peerId)
      }, 180_000, 1000) // h1, refused by relay2 above, asks again within relay.retry.refused_max (4 s here)
    }
    // h1's reservation on relay2 is a retry after its refusal, not a first ask: refused first, then reserved
    const h1Log = readLog(hosts.h1)
    const refusedAt = h1Log.indexOf(`relay: refused reservation on ${hosts.relay2.peerId}: PERMISSION_DENIED`)
    const reservedAt = h1Log.indexOf(`relay: reserved a slot on ${hosts.relay2.peerId}`)
    assert.ok(refusedAt >= 0 && reservedAt > refusedAt, `h1 was refused by relay2, then reserved on it (log offsets ${refusedAt}, ${reservedAt})`)
    const texts = lines('failover-', 600)
    const sending = pacedSend(hosts.h1, 'alice', 'bob', texts, 20_000)
    await received(n, hosts.h2, 'bob', 'failover-', 100, 60_000)
    process.kill((await status(n, hosts.relay)).pid, 'SIGKILL')
    await sending
    assert.deepEqual(await received(n, hosts.h2, 'bob', 'failover-', 600, 150_000), texts)
    const s = await status(n, hosts.h1)
    assert.equal(s.connections.find((c) => c.peer === hosts.h2.peerId)?.relay, hosts.relay2.peerId)
  })
})
