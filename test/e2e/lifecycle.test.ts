// The daemon's lifecycle and the CLI as a new user meets them (issue 19):
// auto-start rules, an idempotent `up`, state that can be seen and undone,
// hints that fix the denial they were printed for, strict input.
import { strict as assert } from 'node:assert'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { amesh, BIN, jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { processAlive } from '../../src/util/process-alive.js'

/** Processes whose command line names this path (a daemon started for a home). */
function processesNaming (path: string): number[] {
  const out: number[] = []
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(path)) out.push(Number(pid))
    } catch { /* gone */ }
  }
  return out
}

/** TCP sockets listening on this port (IPv4 and IPv6), from /proc/net. */
function listeningOn (port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0')
  let n = 0
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length > 3 && cols[1].endsWith(`:${hex}`) && cols[3] === '0A') n++
    }
  }
  return n
}

function newHome (): string {
  const home = mkdtempSync(join(tmpdir(), 'am-life-'))
  writeFileSync(join(home, 'config.yaml'), 'listen: ["/ip4/127.0.0.1/tcp/0"]\n')
  return home
}

describe('e2e lifecycle - auto-start only where a user set a home up', function () {
  this.timeout(120_000)
  const missing = join(tmpdir(), `am-missing-${process.pid}`)

  afterEach(() => rmSync(missing, { recursive: true, force: true }))

  it('lifecycle - status on a home that does not exist starts nothing and creates nothing', async () => {
    const before = listeningOn(4747)
    const r = await amesh(['status', '--home', missing])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /no amesh home at .*amesh init --home/)
    assert.equal(existsSync(missing), false, 'no directory was created')
    assert.deepEqual(processesNaming(missing), [], 'no daemon runs for it')
    assert.equal(listeningOn(4747), before, 'nothing new listens on 4747')
  })

  it('lifecycle - a state-changing command on a missing or never set up home is an error naming the setup command', async () => {
    const r = await amesh(['node', 'add', 'x', '--home', missing])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /amesh init --home/)
    assert.equal(existsSync(missing), false)
    const bare = mkdtempSync(join(tmpdir(), 'am-bare-'))
    try {
      const s = await amesh(['send', '--as', 'a', 'b', 'hi', '--home', bare])
      assert.notEqual(s.code, 0)
      assert.match(s.stderr, /not an initialised amesh home/)
      assert.deepEqual(readdirSync(bare), [], 'nothing was written into it')
      assert.deepEqual(processesNaming(bare), [])
    } finally {
      rmSync(bare, { recursive: true, force: true })
    }
  })

  it('lifecycle - read-only commands on a stopped home say so and exit 3; init then lets a command start it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'am-init-'))
    rmSync(home, { recursive: true })
    try {
      const init = await amesh(['init', '--home', home, '--listen', '/ip4/127.0.0.1/tcp/0', '--no-mdns'])
      assert.equal(init.code, 0, init.stderr)
      assert.match(readFileSync(join(home, 'config.yaml'), 'utf8'), /127\.0\.0\.1\/tcp\/0[\s\S]*mdns: false/)
      for (const cmd of [['status'], ['id'], ['nodes'], ['peers'], ['node', 'ls'], ['grants'], ['inbox', 'x']]) {
        const r = await amesh([...cmd, '--home', home])
        assert.equal(r.code, 3, `${cmd.join(' ')}: ${r.stderr}`)
        assert.match(r.stderr, /not running/)
      }
      assert.deepEqual(processesNaming(home), [], 'no read-only command started a daemon')
      const add = await amesh(['node', 'add', 'x', '--home', home])
      assert.equal(add.code, 0, add.stderr)
      assert.equal((await amesh(['status', '--home', home])).code, 0)
    } finally {
      await amesh(['down', '--home', home])
      rmSync(home, { recursive: true, force: true })
    }
  })
})

/** Start `amesh up` in the foreground; resolves once its socket answers. */
async function foregroundUp (home: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'up', '--home', home], { stdio: ['ignore', 'ignore', 'pipe'] })
  await waitFor(async () => (await amesh(['status', '--home', home])).code === 0, 30_000, 'foreground daemon up')
  return child
}

interface Running { pid: number, pidFile: string, status: number }

async function runningState (home: string): Promise<Running> {
  const s = await amesh(['status', '--home', home, '--json'])
  return { pid: (JSON.parse(s.stdout) as { pid: number }).pid, pidFile: readFileSync(join(home, 'amesh.pid'), 'utf8').trim(), status: s.code }
}

async function assertSecondUpRefused (home: string, first: Running): Promise<void> {
  for (const extra of [['--detach'], ['--detach', '--json'], []]) {
    const r = await amesh(['up', '--home', home, ...extra])
    assert.notEqual(r.code, 0, `up ${extra.join(' ')} must fail`)
    assert.match(r.stderr, new RegExp(`already running .*pid ${first.pid}`))
    const now = await runningState(home)
    assert.equal(now.pid, first.pid, 'the same daemon answers on the socket')
    assert.equal(now.pidFile, String(first.pid), 'its pid file is untouched')
  }
}

describe('e2e lifecycle - up is idempotent and honest', function () {
  this.timeout(180_000)
  let home: string
  let children: ChildProcess[] = []

  beforeEach(() => { home = newHome(); children = [] })
  afterEach(async () => {
    await amesh(['down', '--home', home])
    for (const c of children) c.kill('SIGKILL')
    rmSync(home, { recursive: true, force: true })
  })

  it('lifecycle - detached first: a second up (detached or foreground) names the pid and touches nothing', async () => {
    const up = await amesh(['up', '--detach', '--json', '--home', home])
    assert.equal(up.code, 0, up.stderr)
    const first = await runningState(home)
    assert.equal(first.pid, (JSON.parse(up.stdout) as { pid: number }).pid, 'up --detach reports the pid of the daemon that answers')
    await assertSecondUpRefused(home, first)
    const down = await amesh(['down', '--home', home])
    assert.equal(down.code, 0)
    assert.equal(processAlive(first.pid), false, 'down returns once the process is gone')
    assert.deepEqual(processesNaming(home), [], 'no daemon remains')
  })

  it('lifecycle - foreground first: a second up names the pid and touches nothing', async () => {
    const child = await foregroundUp(home)
    children.push(child)
    const first = await runningState(home)
    assert.equal(first.pid, child.pid)
    await assertSecondUpRefused(home, first)
    assert.equal((await amesh(['down', '--home', home])).code, 0)
    assert.equal(processAlive(first.pid), false)
    assert.deepEqual(processesNaming(home), [])
  })

  it('lifecycle - down while consumers follow inboxes: the daemon stops cleanly (exit 0, no store read after close) and each follower is told', async () => {
    const child = await foregroundUp(home)
    children.push(child)
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    let log = ''
    child.stderr?.on('data', (d: Buffer) => { log += d.toString() })
    for (const n of [1, 2, 3]) assert.equal((await amesh(['send', '--as', 'x', 'x', `m${n}`, '--home', home])).code, 0)
    const followers = [1, 2, 3].map(() => spawn(process.execPath, [BIN, 'inbox', 'x', '--follow', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] }))
    children.push(...followers)
    const outputs = followers.map((f) => {
      const o = { out: '', err: '', code: new Promise<number | null>((resolve) => f.once('exit', (code) => resolve(code))) }
      f.stdout?.on('data', (d: Buffer) => { o.out += d.toString() })
      f.stderr?.on('data', (d: Buffer) => { o.err += d.toString() })
      return o
    })
    await waitFor(async () => outputs.every((o) => o.out.includes('m3')), 30_000, 'every follower to have replayed the inbox')
    assert.equal((await amesh(['down', '--home', home])).code, 0)
    assert.equal(await exited, 0, `the daemon exits 0; its output:\n${log}`)
    assert.doesNotMatch(log, /not open|Error/, 'no handler read the store after it closed')
    assert.match(log, /stopped\n?$/, 'the log ends with the clean stop')
    for (const o of outputs) {
      assert.notEqual(await o.code, 0, 'a follower whose daemon went away does not exit 0')
      assert.match(o.err, /closed the control connection/)
      assert.deepEqual(o.out.split('\n').filter((l) => /m\d/.test(l)).map((l) => /m\d/.exec(l)?.[0]), ['m1', 'm2', 'm3'], 'each follower saw the three messages once, in order')
    }
  })

  it('lifecycle - a port in use is one line naming the address and the setting, and a failed first start leaves nothing', async () => {
    const up = await amesh(['up', '--detach', '--json', '--home', home])
    const addr = (JSON.parse(up.stdout) as { addrs: string[] }).addrs[0]
    const port = /\/tcp\/(\d+)/.exec(addr)?.[1] ?? ''
    const fresh = join(tmpdir(), `am-port-${process.pid}`)
    try {
      for (const extra of [[], ['--detach']]) {
        const r = await amesh(['up', '--home', fresh, '--listen', `/ip4/127.0.0.1/tcp/${port}`, ...extra])
        assert.notEqual(r.code, 0)
        const lines = r.stderr.trim().split('\n')
        assert.equal(lines.length, 1, r.stderr)
        assert.match(lines[0], new RegExp(`cannot listen on /ip4/127\\.0\\.0\\.1/tcp/${port}: the address is in use.*--listen`))
        assert.doesNotMatch(r.stderr, /faultTolerance|\n\s+at /)
        assert.equal(existsSync(fresh), false, `nothing of the new home is left (${extra.join(' ')})`)
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true })
    }
  })
})

interface PeersOut { connected: Array<{ peer: string, relayed: boolean }>, remembered: string[] }

describe('e2e lifecycle - state you can see and undo', function () {
  this.timeout(180_000)
  let a: TestHost
  let b: TestHost

  before(async () => {
    a = await startHost()
    b = await startHost()
  })
  after(async () => { await a?.cleanup(); await b?.cleanup() })

  it('lifecycle - join refuses an address without /p2p/ or with a wrong port and remembers nothing', async () => {
    const bare = b.addr.replace(/\/p2p\/.*$/, '')
    const noPeer = await a.run(['join', bare])
    assert.notEqual(noPeer.code, 0)
    assert.match(noPeer.stderr, /must end in \/p2p\/<peer id>/)
    const wrongPort = b.addr.replace(/\/tcp\/\d+/, '/tcp/1')
    const refused = await a.run(['join', wrongPort])
    assert.notEqual(refused.code, 0)
    const peers = JSON.parse(await a.ok(['peers', '--json'])) as PeersOut
    assert.deepEqual(peers.remembered, [], 'nothing was remembered')
    const badPeer = await a.run(['up', '--peer', bare])
    assert.notEqual(badPeer.code, 0)
    assert.match(badPeer.stderr, /--peer address .* names no peer/)
  })

  it('lifecycle - join, peers, join --forget', async () => {
    assert.equal((await a.run(['join', b.addr])).code, 0)
    const peers = JSON.parse(await a.ok(['peers', '--json'])) as PeersOut
    assert.deepEqual(peers.remembered, [b.addr])
    assert.ok(peers.connected.some((c) => c.peer === b.peerId && !c.relayed), JSON.stringify(peers.connected))
    assert.equal((await a.run(['join', '--forget', b.addr])).code, 0)
    assert.deepEqual((JSON.parse(await a.ok(['peers', '--json'])) as PeersOut).remembered, [])
    const again = await a.run(['join', '--forget', b.addr])
    assert.notEqual(again.code, 0, 'forgetting an unknown address is an error')
    await a.stop()
    await a.start()
    assert.deepEqual((JSON.parse(await a.ok(['peers', '--json'])) as PeersOut).remembered, [], 'still forgotten after a restart')
  })

  it('lifecycle - node ls shows a typo node, node rm removes it, --force for unread', async () => {
    await a.ok(['send', '--as', 'worker1', 'worker1', 'self note'])
    await a.ok(['node', 'add', 'keep'])
    const rows = jsonLines<{ name: string, kind: string, unread: number, created: number }>(await a.ok(['node', 'ls', '--json']))
    const typo = rows.find((r) => r.name === 'worker1')
    assert.equal(typo?.kind, 'external')
    assert.equal(typo?.unread, 1)
    assert.equal(typeof typo?.created, 'number')
    const refused = await a.run(['node', 'rm', 'worker1'])
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /1 unread message.*--force/)
    assert.equal((await a.run(['node', 'rm', 'worker1', '--force'])).code, 0)
    const names = jsonLines<{ name: string }>(await a.ok(['node', 'ls', '--json'])).map((r) => r.name)
    assert.ok(!names.includes('worker1') && names.includes('keep'), names.join(','))
    await a.stop()
    await a.start()
    assert.ok(!jsonLines<{ name: string }>(await a.ok(['node', 'ls', '--json'])).some((r) => r.name === 'worker1'), 'gone for good')
    const inbox = await a.run(['inbox', 'worker1'])
    assert.notEqual(inbox.code, 0)
  })

  it('lifecycle - node rm refuses a parent of local nodes', async () => {
    await a.ok(['node', 'add', 'boss'])
    await a.ok(['node', 'add', 'kid', '--parent', 'boss'])
    const r = await a.run(['node', 'rm', 'boss'])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /parent of kid/)
  })
})

describe('e2e lifecycle - hints that fix the denial they were printed for', function () {
  this.timeout(180_000)
  let lead: TestHost
  let other: TestHost

  before(async () => {
    lead = await startHost()
    other = await startHost({ peers: [lead.addr] })
    await lead.ok(['node', 'add', 'lead'])
    await other.ok(['node', 'add', 'alice'])
  })
  after(async () => { await lead?.cleanup(); await other?.cleanup() })

  /** Run a printed hint command on the host whose peer id it names (or on `here`). */
  async function runHint (stderr: string, here: TestHost): Promise<void> {
    const m = /(?:on (?:\S+'s host \(peer (\S+)\)|this host)): (amesh .*)$/m.exec(stderr)
    assert.ok(m !== null, `a hint with a command: ${stderr}`)
    const host = m[1] === undefined ? here : [lead, other].find((h) => h.peerId === m[1])
    assert.ok(host !== undefined, `the hint names a known host: ${m[1]}`)
    const argv = (m[2].match(/'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^'|'$/g, '')).slice(1)
    const r = await host.run(argv)
    assert.equal(r.code, 0, `hint ${m[2]}: ${r.stderr}`)
  }

  it('hints - a cross-host NO_GRANT names lead\'s host; run there exactly as printed, it allows the send', async () => {
    await waitFor(async () => (await other.ok(['nodes', '--json'])).includes('"lead"'), 20_000, 'lead known on the other host')
    const denied = await other.run(['send', '--as', 'alice', 'lead', 'hello'])
    assert.notEqual(denied.code, 0)
    assert.match(denied.stderr, new RegExp(`NO_GRANT.*on lead's host \\(peer ${lead.peerId}\\): amesh grant --as lead --to alice --signals MESSAGE`))
    await runHint(denied.stderr, other)
    await waitFor(async () => (await other.run(['send', '--as', 'alice', 'lead', 'hello'])).code === 0, 20_000, 'the send allowed')
    await waitFor(async () => (await lead.ok(['inbox', 'lead', '--json'])).includes('hello'), 20_000, 'delivered')
  })

  it('hints - a profile denial names the profile change, not a grant; running it allows the send', async () => {
    await lead.ok(['node', 'add', 'w1', '--parent', 'lead'])
    await lead.ok(['node', 'add', 'w2', '--parent', 'lead'])
    await lead.ok(['profile', '--as', 'lead', '--receives-from', 'w1'])
    const denied = await lead.run(['send', '--as', 'w2', 'lead', 'from w2'])
    assert.match(denied.stderr, /PROFILE_SENDER/)
    assert.doesNotMatch(denied.stderr, /amesh grant/)
    assert.match(denied.stderr, /on this host: amesh profile --as lead --receives-from w1,w2/)
    await runHint(denied.stderr, lead)
    assert.equal((await lead.run(['send', '--as', 'w2', 'lead', 'from w2'])).code, 0)
    assert.equal((await lead.run(['send', '--as', 'w1', 'lead', 'from w1'])).code, 0, 'the profile kept w1')
  })

  it('hints - delegation names the flag that narrows; a clamp is reported; --expires 0s names the flag', async () => {
    const g = JSON.parse(await lead.ok(['grant', '--as', 'lead', '--to', 'w1', '--signals', 'MESSAGE', '--expires', '1h', '--json'])) as { token_id: string }
    await lead.ok(['node', 'add', 'w3'])
    const wide = await lead.run(['grant', '--as', 'w1', '--to', 'w3', '--delegate', g.token_id])
    assert.notEqual(wide.code, 0)
    assert.match(wide.stderr, /would widen.*pass --signals MESSAGE/)
    const clamped = await lead.run(['grant', '--as', 'w1', '--to', 'w3', '--delegate', g.token_id, '--signals', 'MESSAGE', '--expires', '30d'])
    assert.equal(clamped.code, 0, clamped.stderr)
    assert.match(clamped.stderr, /--expires clamped to .*expiry of the delegated grant/)
    const zero = await lead.run(['grant', '--as', 'lead', '--to', 'w3', '--expires', '0s'])
    assert.notEqual(zero.code, 0)
    assert.match(zero.stderr, /--expires must be longer than 0/)
    assert.doesNotMatch(zero.stderr, /expires_ms/)
  })

  it('input - non-UTF-8 and empty text are refused with a clear error and nothing is sent', async () => {
    await lead.ok(['node', 'add', 'inp'])
    const before = (await lead.ok(['inbox', 'inp', '--json'])).trim()
    const empty = await lead.run(['send', '--as', 'inp', 'inp', ''])
    assert.notEqual(empty.code, 0)
    assert.match(empty.stderr, /TEXT is empty.*--allow-empty/)
    const bad = await amesh(['send', '--as', 'inp', 'inp', '-', '--home', lead.home], { input: Buffer.concat([Buffer.from('ok line\n'), Buffer.from([0xff, 0xfe]), Buffer.from(' broken\n')]) })
    assert.notEqual(bad.code, 0)
    assert.match(bad.stderr, /not valid UTF-8 \(at line 2\)/)
    const texts = jsonLines<{ payload: { text: string } }>(await lead.ok(['inbox', 'inp', '--json'])).map((r) => r.payload.text)
    assert.equal(before, '')
    assert.deepEqual(texts, ['ok line'], 'only the valid line before the bad one was sent, and nothing was replaced')
    assert.equal((await lead.run(['send', '--as', 'inp', 'inp', '', '--allow-empty'])).code, 0)
  })
})
