/**
 * Self-tests of the test infrastructure: the namespace LAN helper
 * (test/utils/netns.ts) and the private sshd (test/utils/sshd.ts).
 * Skipped with a visible reason when not root / tools missing; CI runs as root.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { canUseNetns, createLan, listNamespaces } from '../utils/netns.js';
import type { Lan } from '../utils/netns.js';
import { startSshd, sshdAvailable } from '../utils/sshd.js';
import type { Sshd } from '../utils/sshd.js';

const NODE = process.execPath;

/** TCP echo server: `node -e ECHO_SERVER host port`, prints "listening". */
const ECHO_SERVER = `
const net = require('net');
const [h, p] = process.argv.slice(1);
net.createServer((s) => { s.on('error', () => {}); s.pipe(s); }).listen(Number(p), h, () => console.log('listening'));
`;

/** Connect (retrying until a deadline), send a token, print what comes back. */
const ECHO_CLIENT = `
const net = require('net');
const [h, p, token, ms] = process.argv.slice(1);
const deadline = Date.now() + Number(ms);
function attempt() {
  const s = net.connect(Number(p), h);
  let got = '';
  s.setEncoding('utf8');
  s.on('connect', () => s.write(token));
  s.on('data', (d) => { got += d; if (got.length >= token.length) { console.log('echo:' + got); process.exit(0); } });
  s.on('error', (e) => {
    s.destroy();
    if (Date.now() > deadline) { console.log('fail:' + e.code); process.exit(1); }
    setTimeout(attempt, 100);
  });
}
attempt();
`;

/** One connect attempt with a timeout: prints "connected", "timeout" or "error:CODE". */
const CONNECT_ONCE = `
const net = require('net');
const [h, p, ms] = process.argv.slice(1);
const s = net.connect(Number(p), h);
const t = setTimeout(() => { console.log('timeout'); process.exit(0); }, Number(ms));
s.on('connect', () => { clearTimeout(t); console.log('connected'); process.exit(0); });
s.on('error', (e) => { clearTimeout(t); console.log('error:' + e.code); process.exit(0); });
`;

/** Long-lived client: stdin lines are written to the socket; prints recv:/error:/close events. */
const STREAM_CLIENT = `
const net = require('net');
const [h, p] = process.argv.slice(1);
const s = net.connect(Number(p), h);
s.setEncoding('utf8');
s.on('connect', () => console.log('connected'));
s.on('data', (d) => { for (const l of d.split('\\n')) if (l) console.log('recv:' + l); });
s.on('error', (e) => console.log('error:' + e.code));
s.on('close', () => { console.log('close'); process.exit(0); });
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => s.write(d));
`;

/** Join 224.0.0.251 on addr, print "ready", then print the first datagram and exit. */
const MCAST_RECV = `
const dgram = require('dgram');
const [addr] = process.argv.slice(1);
const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
s.on('message', (m, r) => { console.log('got:' + m.toString() + ' from ' + r.address); process.exit(0); });
s.bind(5353, () => { s.addMembership('224.0.0.251', addr); console.log('ready'); });
`;

/** Send a datagram to 224.0.0.251:5353 from addr every 100 ms. */
const MCAST_SEND = `
const dgram = require('dgram');
const [addr, msg] = process.argv.slice(1);
const s = dgram.createSocket('udp4');
s.bind(0, addr, () => {
  s.setMulticastInterface(addr);
  setInterval(() => s.send(msg, 5353, '224.0.0.251'), 100);
});
`;

/** Collects a child's stdout lines; waitFor resolves on the first matching line. */
class Lines {
  readonly lines: string[] = [];
  private buf = '';
  private waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  stderr = '';
  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      this.buf += d;
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => {
          if (!w.re.test(line)) return true;
          w.resolve(line);
          return false;
        });
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
  }
  waitFor(re: RegExp, timeoutMs: number): Promise<string> {
    const seen = this.lines.find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`no line matching ${re} within ${timeoutMs} ms; stdout=${JSON.stringify(this.lines)} stderr=${this.stderr}`)),
        timeoutMs,
      );
      this.waiters.push({
        re,
        resolve: (l) => {
          clearTimeout(t);
          resolve(l);
        },
      });
    });
  }
}

function hasCommand(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

async function pollUntil(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function killAll(children: ChildProcess[]): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

describe('infra: namespace LAN helper', function () {
  let lan: Lan | undefined;
  const children: ChildProcess[] = [];

  before(async function () {
    const can = canUseNetns();
    if (!can.ok) {
      console.warn(`    [skip] namespace LAN tests: ${can.reason}`);
      this.skip();
    }
    lan = await createLan('infra', 2);
  });

  afterEach(() => killAll(children.splice(0)));

  after(async function () {
    await lan?.down();
  });

  const L = (): Lan => {
    assert.ok(lan);
    return lan;
  };

  it('builds hosts with unique names, LAN addresses, loopback up and the multicast route', async function () {
    const l = L();
    assert.equal(l.hosts.length, 2);
    assert.match(l.name, new RegExp(`-${process.pid}-\\d+$`));
    assert.deepEqual(
      l.hosts.map((h) => [h.index, h.ns, h.addr]),
      [
        [1, `${l.name}-1`, `10.${l.octet}.0.1`],
        [2, `${l.name}-2`, `10.${l.octet}.0.2`],
      ],
    );
    const present = await listNamespaces();
    for (const ns of [...l.hosts.map((h) => h.ns), l.bridgeNs]) assert.ok(present.includes(ns), `${ns} missing`);
    for (const h of l.hosts) {
      const addr = await l.run(h.index, 'ip', ['-4', '-o', 'addr', 'show', 'dev', 'eth0']);
      assert.equal(addr.code, 0, addr.stderr);
      assert.match(addr.stdout, new RegExp(`inet ${h.addr.replace(/\./g, '\\.')}/24`));
      const lo = await l.run(h.index, 'ip', ['-o', 'link', 'show', 'dev', 'lo']);
      assert.match(lo.stdout, /<[^>]*\bUP\b[^>]*>/);
      const mc = await l.run(h.index, 'ip', ['route', 'show', '224.0.0.0/4']);
      assert.match(mc.stdout, /224\.0\.0\.0\/4 dev eth0/);
    }
    // the machine's own namespace never sees the LAN's interfaces
    const own = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
    assert.ok(!own.includes(l.name));
  });

  it('host 1 pings host 2; cut drops it; heal restores it', async function () {
    if (!hasCommand('ping')) {
      console.warn('    [skip] ping not installed (iputils-ping); the TCP partition test covers cut/heal');
      this.skip();
    }
    const l = L();
    const a2 = l.hosts[1]!.addr;
    const ping = (): Promise<number | null> => l.run(1, 'ping', ['-c1', '-W1', a2], { timeoutMs: 5000 }).then((r) => r.code);
    assert.equal(await ping(), 0);
    await l.cut(2);
    try {
      assert.notEqual(await ping(), 0, 'ping must fail while host 2 is cut');
    } finally {
      await l.heal(2);
    }
    await pollUntil('ping after heal', async () => (await ping()) === 0, 5000);
    const mc = await l.run(2, 'ip', ['route', 'show', '224.0.0.0/4']);
    assert.match(mc.stdout, /224\.0\.0\.0\/4 dev eth0/, 'heal restores the multicast route');
  });

  it('cut is a silent partition: no RST, an open TCP stream survives and resumes after heal', async function () {
    const l = L();
    const a2 = l.hosts[1]!.addr;
    const server = new Lines(l.exec(2, NODE, ['-e', ECHO_SERVER, a2, '7100']));
    children.push(server.child);
    await server.waitFor(/^listening$/, 10000);

    const client = new Lines(l.exec(1, NODE, ['-e', STREAM_CLIENT, a2, '7100'], { stdio: ['pipe', 'pipe', 'pipe'] }));
    children.push(client.child);
    await client.waitFor(/^connected$/, 10000);
    client.child.stdin?.write('one\n');
    await client.waitFor(/^recv:one$/, 5000);

    await l.cut(2);
    let healed = false;
    try {
      // a new connection attempt neither connects nor is refused: packets vanish
      const probe = await l.run(1, NODE, ['-e', CONNECT_ONCE, a2, '7100', '1500'], { timeoutMs: 10000 });
      assert.equal(probe.stdout.trim(), 'timeout');
      client.child.stdin?.write('two\n');
      await new Promise((r) => setTimeout(r, 1000)); // observation window: nothing may arrive while cut
      assert.ok(!client.lines.includes('recv:two'), 'nothing crosses a cut link');
      assert.ok(!client.lines.some((x) => x.startsWith('error:') || x === 'close'), `stream broke: ${client.lines}`);
      await l.heal(2);
      healed = true;
    } finally {
      if (!healed) await l.heal(2);
    }
    await client.waitFor(/^recv:two$/, 15000); // TCP retransmission delivers it after heal
    assert.deepEqual(
      client.lines.filter((x) => x.startsWith('recv:')),
      ['recv:one', 'recv:two'],
    );
  });

  it('multicast (mDNS group 224.0.0.251:5353) crosses the LAN', async function () {
    const l = L();
    const [h1, h2] = [l.hosts[0]!, l.hosts[1]!];
    const recv = new Lines(l.exec(2, NODE, ['-e', MCAST_RECV, h2.addr]));
    children.push(recv.child);
    await recv.waitFor(/^ready$/, 10000);
    const send = new Lines(l.exec(1, NODE, ['-e', MCAST_SEND, h1.addr, 'hello-mdns']));
    children.push(send.child);
    const got = await recv.waitFor(/^got:/, 10000);
    assert.equal(got, `got:hello-mdns from ${h1.addr}`);
  });

  it('exec hides AMESH_MDNS from processes inside the LAN unless env is given', async function () {
    const l = L();
    const saved = process.env.AMESH_MDNS;
    process.env.AMESH_MDNS = 'off';
    try {
      const r = await l.run(1, 'sh', ['-c', 'echo "m=${AMESH_MDNS:-unset}"']);
      assert.equal(r.stdout.trim(), 'm=unset');
      const r2 = await l.run(1, 'sh', ['-c', 'echo "m=${AMESH_MDNS:-unset}"'], { env: { ...process.env } });
      assert.equal(r2.stdout.trim(), 'm=off');
    } finally {
      if (saved === undefined) delete process.env.AMESH_MDNS;
      else process.env.AMESH_MDNS = saved;
    }
  });

  it('concurrent LANs get distinct names and subnets; down() kills their processes, removes everything, and is idempotent', async function () {
    const [a, b] = await Promise.all([createLan('infra', 1), createLan('infra', 2)]);
    try {
      assert.notEqual(a.name, b.name);
      assert.notEqual(a.octet, b.octet);
      assert.notEqual(a.octet, L().octet);
      const sleeper = a.exec(1, 'sleep', ['600']);
      const exited = new Promise<NodeJS.Signals | null>((r) => sleeper.once('exit', (_c, s) => r(s)));
      await a.down();
      assert.equal(await exited, 'SIGKILL');
      await a.down(); // idempotent
      await b.down();
      const present = await listNamespaces();
      for (const ns of [...a.hosts, ...b.hosts].map((h) => h.ns).concat(a.bridgeNs, b.bridgeNs)) {
        assert.ok(!present.includes(ns), `${ns} still present after down()`);
      }
      assert.throws(() => a.exec(1, 'true'), /is down/);
    } finally {
      await a.down();
      await b.down();
    }
  });
});

describe('infra: private sshd', function () {
  let lan: Lan | undefined;
  let sshd: Sshd | undefined;
  const children: ChildProcess[] = [];

  before(async function () {
    const can = canUseNetns();
    const avail = sshdAvailable();
    if (!can.ok || !avail.ok) {
      console.warn(`    [skip] sshd tests: ${can.ok ? avail.reason : can.reason}`);
      this.skip();
    }
    lan = await createLan('ssh', 2);
    sshd = await startSshd({ ns: lan.hosts[1]!.ns, listenAddr: lan.hosts[1]!.addr });
  });

  afterEach(() => killAll(children.splice(0)));

  after(async function () {
    await sshd?.stop();
    await lan?.down();
  });

  const S = (): { lan: Lan; sshd: Sshd } => {
    assert.ok(lan && sshd);
    return { lan, sshd };
  };

  it('runs a command over ssh from host 1 to sshd inside host 2', async function () {
    const { lan: l, sshd: s } = S();
    assert.equal(s.host, l.hosts[1]!.addr);
    const r = await l.run(1, 'ssh', [...s.sshOptions, s.destination, 'echo', 'hello'], { timeoutMs: 20000 });
    assert.equal(r.code, 0, `ssh failed: ${r.stderr}\nsshd log:\n${s.log()}`);
    assert.equal(r.stdout, 'hello\n');
  });

  it('rejects a client without the test key (BatchMode, no password fallback)', async function () {
    const { lan: l, sshd: s } = S();
    const opts = s.sshOptions.filter((o, i, a) => o !== '-i' && a[i - 1] !== '-i');
    const r = await l.run(1, 'ssh', [...opts, '-i', '/dev/null', s.destination, 'echo', 'hello'], { timeoutMs: 20000 });
    assert.notEqual(r.code, 0);
    assert.equal(r.stdout, '');
  });

  it('forwards a local port in host 1 to a TCP server on host 2 loopback (ssh -N -L)', async function () {
    const { lan: l, sshd: s } = S();
    const server = new Lines(l.exec(2, NODE, ['-e', ECHO_SERVER, '127.0.0.1', '7200']));
    children.push(server.child);
    await server.waitFor(/^listening$/, 10000);

    // host 1's own loopback has nothing on 7200: the tunnel is the only way there
    const direct = await l.run(1, NODE, ['-e', CONNECT_ONCE, '127.0.0.1', '7200', '1000']);
    assert.equal(direct.stdout.trim(), 'error:ECONNREFUSED');

    const tunnel = l.exec(
      1,
      'ssh',
      [...s.sshOptions, '-N', '-o', 'ExitOnForwardFailure=yes', '-L', '127.0.0.1:7201:127.0.0.1:7200', s.destination],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(tunnel);
    const tunnelOut = new Lines(tunnel);
    const r = await l.run(1, NODE, ['-e', ECHO_CLIENT, '127.0.0.1', '7201', 'through-the-tunnel', '15000'], { timeoutMs: 20000 });
    assert.equal(r.stdout.trim(), 'echo:through-the-tunnel', `client: ${r.stdout}${r.stderr}\nssh: ${tunnelOut.stderr}\nsshd: ${s.log()}`);
  });

  it('also runs on loopback in the test process namespace', async function () {
    const local = await startSshd();
    try {
      assert.equal(local.host, '127.0.0.1');
      const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const c = spawn('ssh', [...local.sshOptions, local.destination, 'echo', 'hello'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        c.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
        c.once('close', (code) => resolve({ code, out, err }));
      });
      assert.equal(r.code, 0, `${r.err}\nsshd: ${local.log()}`);
      assert.equal(r.out, 'hello\n');
    } finally {
      await local.stop();
      await local.stop(); // idempotent
    }
  });
});
