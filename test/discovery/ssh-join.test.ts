// `amesh join --ssh`: two hosts in a namespace LAN, host 2's amesh listening
// only on its own loopback (host 1 cannot dial it), an sshd made by the test on
// host 2. Host 1 joins through an ssh port-forward; messages flow both ways;
// the forward is killed, comes back, and delivery resumes. Also: clear errors
// when ssh fails, when amesh is missing, and when it is not running.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canUseNetns, createLan, type Lan } from '../utils/netns.js'
import { sshdAvailable, startSshd, type Sshd } from '../utils/sshd.js'
import { BIN, amesh, jsonLines } from './netns-cli.js'
import { until } from './hosts.js'

interface Tunnel { target: string, state: string, peerId?: string, localPort?: number, pid?: number, restarts: number }
interface Packet { from: string, payload: { text?: string } }

describe('discovery - join through an ssh tunnel (namespaces)', function () {
  this.timeout(180_000)
  let lan: Lan | undefined
  let sshd: Sshd | undefined
  const homes: string[] = []
  let sshFlags: string[] = []

  before(async function () {
    const can = canUseNetns()
    const ssh = sshdAvailable()
    if (!can.ok || !ssh.ok) {
      process.stderr.write(`skipping ssh join tests: ${can.reason ?? ssh.reason ?? ''}\n`)
      this.skip()
    }
    lan = await createLan('sshj', 2)
    homes.push(mkdtempSync(join(tmpdir(), 'ams1-')), mkdtempSync(join(tmpdir(), 'ams2-')))
    writeFileSync(join(homes[0], 'config.yaml'), 'mdns: false\n')
    writeFileSync(join(homes[1], 'config.yaml'), 'listen: ["/ip4/127.0.0.1/tcp/4747"]\nmdns: false\n')
    sshd = await startSshd({ ns: lan.hosts[1].ns, listenAddr: lan.hosts[1].addr })
    sshFlags = [
      '--ssh-config', 'none', '--identity', sshd.identityFile,
      '--ssh-option', 'IdentitiesOnly=yes', '--ssh-option', `UserKnownHostsFile=${sshd.knownHostsFile}`,
      '--ssh-option', 'GlobalKnownHostsFile=/dev/null', '--ssh-option', 'StrictHostKeyChecking=yes', '--ssh-option', 'LogLevel=ERROR'
    ]
  })

  after(async () => {
    if (lan !== undefined) {
      await Promise.all(homes.map(async (h, i) => await amesh(lan as Lan, i + 1, h, ['down'], true).catch(() => undefined)))
    }
    await sshd?.stop()
    await lan?.down()
    for (const h of homes) rmSync(h, { recursive: true, force: true })
  })

  const target = (): string => `${(sshd as Sshd).destination}:${(sshd as Sshd).port}`
  const remote = (home: string): string[] => ['--remote-amesh', `${process.execPath} ${BIN}`, '--remote-home', home]

  it('ssh - clear errors: ssh fails, amesh missing, amesh not running', async () => {
    const l = lan as Lan
    await amesh(l, 1, homes[0], ['up', '--detach'])
    const refused = await amesh(l, 1, homes[0], ['join', '--ssh', `${(sshd as Sshd).user}@${l.hosts[1].addr}:1`, ...sshFlags, ...remote(homes[1])], true)
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /ssh to .* failed: .*(refused|Connection)/i)
    const missing = await amesh(l, 1, homes[0], ['join', '--ssh', target(), ...sshFlags, '--remote-amesh', '/nonexistent/amesh'], true)
    assert.notEqual(missing.code, 0)
    assert.match(missing.stderr, /amesh is not installed on/)
    const down = await amesh(l, 1, homes[0], ['join', '--ssh', target(), ...sshFlags, ...remote(homes[1])], true)
    assert.notEqual(down.code, 0)
    assert.match(down.stderr, /amesh is not running on/)
    // and nothing was started on the remote by asking
    const st = await l.run(2, process.execPath, [BIN, 'join', '--info', '--home', homes[1]])
    assert.equal(st.code, 3)
  })

  it('ssh - join links a loopback-only host; messages flow both ways; a killed tunnel comes back', async () => {
    const l = lan as Lan
    await amesh(l, 2, homes[1], ['up', '--detach'])
    const info = JSON.parse((await amesh(l, 2, homes[1], ['join', '--info', '--json'])).stdout) as { peerId: string, addrs: string[] }
    assert.ok(info.addrs.every((a) => a.startsWith('/ip4/127.0.0.1/tcp/4747')), JSON.stringify(info.addrs))
    // host 1 cannot reach host 2's amesh directly
    const direct = await amesh(l, 1, homes[0], ['join', `/ip4/${l.hosts[1].addr}/tcp/4747/p2p/${info.peerId}`], true, 40_000)
    assert.notEqual(direct.code, 0)

    await amesh(l, 1, homes[0], ['node', 'add', 'alpha'])
    await amesh(l, 2, homes[1], ['node', 'add', 'beta'])
    const joined = JSON.parse((await amesh(l, 1, homes[0], ['join', '--ssh', target(), ...sshFlags, ...remote(homes[1]), '--json'])).stdout) as Tunnel
    assert.equal(joined.peerId, info.peerId)
    assert.equal(joined.state, 'up')

    await amesh(l, 2, homes[1], ['grant', '--as', 'beta', '--to', 'alpha', '--signals', 'MESSAGE'])
    await amesh(l, 1, homes[0], ['grant', '--as', 'alpha', '--to', 'beta', '--signals', 'MESSAGE'])
    const send = async (i: number, as: string, to: string, text: string): Promise<void> => {
      await until(`${as} → ${to} accepted`, async () => (await amesh(l, i, homes[i - 1], ['send', '--as', as, to, text])).code === 0, 20_000, 250)
    }
    const inbox = async (i: number, node: string, n: number): Promise<string[]> => await until(`${n} message(s) at ${node}`, async () => {
      const p = jsonLines<Packet>((await amesh(l, i, homes[i - 1], ['inbox', node, '--json'])).stdout)
      return p.length >= n ? p.map((x) => x.payload.text ?? '') : undefined
    }, 30_000, 250)
    await send(1, 'alpha', 'beta', 'there')
    assert.deepEqual(await inbox(2, 'beta', 1), ['there'])
    await send(2, 'beta', 'alpha', 'and back')
    assert.deepEqual(await inbox(1, 'alpha', 1), ['and back'])

    const tunnels = async (): Promise<Tunnel[]> => jsonLines<Tunnel>((await amesh(l, 1, homes[0], ['join', '--tunnels', '--json'])).stdout)
    const [before] = await tunnels()
    assert.equal(before.state, 'up')
    assert.ok(before.pid !== undefined)
    process.kill(before.pid, 'SIGKILL')
    const after = await until('the tunnel to come back', async () => {
      const [t] = await tunnels()
      return t.state === 'up' && t.pid !== undefined && t.pid !== before.pid ? t : undefined
    }, 30_000, 250)
    assert.ok(after.restarts >= 1)
    await send(1, 'alpha', 'beta', 'after the restart')
    assert.deepEqual(await inbox(2, 'beta', 2), ['there', 'after the restart'])
    await send(2, 'beta', 'alpha', 'still both ways')
    assert.deepEqual(await inbox(1, 'alpha', 2), ['and back', 'still both ways'])
  })

  it('ssh - the join is remembered across a restart of the joining host', async () => {
    const l = lan as Lan
    await amesh(l, 1, homes[0], ['down'])
    await amesh(l, 1, homes[0], ['up', '--detach'])
    const t = await until('the remembered tunnel to come up', async () => {
      const [row] = jsonLines<Tunnel>((await amesh(l, 1, homes[0], ['join', '--tunnels', '--json'])).stdout)
      return row?.state === 'up' ? row : undefined
    }, 30_000, 250)
    assert.ok(t.peerId !== undefined)
    await until('alpha → beta after the restart', async () => (await amesh(l, 1, homes[0], ['send', '--as', 'alpha', 'beta', 'remembered'])).code === 0, 20_000, 250)
    const texts = await until('the third message at beta', async () => {
      const p = jsonLines<Packet>((await amesh(l, 2, homes[1], ['inbox', 'beta', '--json'])).stdout)
      return p.length >= 3 ? p.map((x) => x.payload.text) : undefined
    }, 30_000, 250)
    assert.equal(texts[2], 'remembered')
  })
})
