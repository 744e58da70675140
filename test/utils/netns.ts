/**
 * A private LAN of test hosts built from Linux network namespaces, after the
 * pattern of ../shared/tools/netns-lan.sh, in the project's own code so the
 * suite runs from a fresh clone.
 *
 * Layout for a LAN with full name F and n hosts:
 *   - namespace `F-br` holds a bridge `br0` (multicast snooping off);
 *   - namespace `F-i` (i = 1..n) holds `lo` (up) and `eth0`, a veth whose peer
 *     `b<i>` is a port of `br0`; eth0 has 10.<k>.0.<i>/24 and a route
 *     224.0.0.0/4 dev eth0 so mDNS works between the hosts.
 *
 * Both ends of every veth are created directly inside their namespaces
 * (`ip -n NS link add eth0 type veth peer name b<i> netns F-br`), so no
 * interface ever exists in the machine's own namespace — no 15-character
 * interface-name limit to fight with, no name clash between concurrent runs,
 * and nothing touches the machine's own interfaces.
 *
 * Needs root. Network rule: all traffic stays inside these namespaces.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LanHost {
  /** 1-based host index. */
  index: number;
  /** Namespace name, usable with `ip netns exec`. */
  ns: string;
  /** IPv4 address of the host's eth0 on the LAN. */
  addr: string;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Kill the command (SIGKILL) after this many ms; default 30000. */
  timeoutMs?: number;
  /** Environment; default: process.env without AMESH_MDNS. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to the command's stdin, which is then closed. */
  input?: string;
}

export interface Lan {
  /** Full, run-unique LAN name (prefix of every namespace name). */
  name: string;
  /** Second octet of the LAN's 10.<k>.0.0/24 subnet. */
  octet: number;
  hosts: LanHost[];
  /** Namespace holding the bridge. */
  bridgeNs: string;
  /**
   * Spawn `cmd args` inside host i's namespace (`ip netns exec`). `ip` execs
   * the command in place, so the child's pid is the command's pid. When
   * `opts.env` is not given the child gets process.env without AMESH_MDNS
   * (mDNS is allowed inside a namespace LAN). down() kills anything still
   * running in the namespace.
   */
  exec(i: number, cmd: string, args?: readonly string[], opts?: SpawnOptions): ChildProcess;
  /** Run a command inside host i's namespace to completion; never rejects on a non-zero exit. */
  run(i: number, cmd: string, args?: readonly string[], opts?: RunOptions): Promise<RunResult>;
  /** Unplug host i (eth0 down inside its namespace): packets vanish, no FIN, no RST. */
  cut(i: number): Promise<void>;
  /** Plug host i back in (eth0 up, multicast route replaced). */
  heal(i: number): Promise<void>;
  /** Kill every process in the LAN's namespaces and delete them. Idempotent, never throws. */
  down(): Promise<void>;
}

const IP = 'ip';
/** Marker at the start of every namespace this helper creates (for stale cleanup). */
const PREFIX = 'amt';
const OCTET_MIN = 20;
const OCTET_COUNT = 200; // 10.20.0.0/24 .. 10.219.0.0/24
const MAX_HOSTS = 60;

let seq = 0;
let cachedNetns: { ok: boolean; reason?: string } | undefined;

function ip(args: readonly string[], timeoutMs = 15000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(IP, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`ip ${args.join(' ')} failed: ${String(stderr).trim() || err.message}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** Environment for processes inside a namespace LAN: as given, or process.env minus AMESH_MDNS. */
export function lanEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env) return env;
  const e: NodeJS.ProcessEnv = { ...process.env };
  delete e.AMESH_MDNS;
  return e;
}

/**
 * Whether this process can build namespace LANs: root, iproute2 present, and
 * `ip netns add` works. Synchronous and cached so a test can do
 * `const c = canUseNetns(); if (!c.ok) { console.warn(c.reason); this.skip(); }`.
 */
export function canUseNetns(): { ok: boolean; reason?: string } {
  if (cachedNetns) return cachedNetns;
  cachedNetns = probeNetns();
  return cachedNetns;
}

function probeNetns(): { ok: boolean; reason?: string } {
  if (process.platform !== 'linux') return { ok: false, reason: `network namespaces need Linux (platform is ${process.platform})` };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { ok: false, reason: 'network-namespace tests need root (ip netns); not running as root' };
  }
  try {
    execFileSync(IP, ['-V'], { stdio: 'pipe', timeout: 5000 });
  } catch (e) {
    return { ok: false, reason: `iproute2 'ip' not usable: ${(e as Error).message}` };
  }
  const probe = `${PREFIX}p${process.pid.toString(36)}`;
  try {
    execFileSync(IP, ['netns', 'add', probe], { stdio: 'pipe', timeout: 5000 });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    return { ok: false, reason: `'ip netns add' failed: ${err.stderr?.toString().trim() || err.message}` };
  }
  try {
    execFileSync(IP, ['netns', 'del', probe], { stdio: 'pipe', timeout: 5000 });
  } catch {
    // best effort
  }
  return { ok: true };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---- subnet octet reservation -------------------------------------------
// One file per octet, created with O_EXCL; it holds the owner's pid. A file
// whose pid is dead is stale and is reclaimed. This keeps concurrently built
// LANs (other mocha processes, parallel CI jobs) on distinct subnets.

function reservationDir(): string {
  for (const d of ['/run/amesh-test-netns', join(tmpdir(), 'amesh-test-netns')]) {
    try {
      mkdirSync(d, { recursive: true, mode: 0o755 });
      return d;
    } catch {
      // try the next one
    }
  }
  throw new Error('netns: no writable directory for subnet reservations');
}

function reserveOctet(lanName: string): { octet: number; release: () => void } {
  const dir = reservationDir();
  // Start at a pid-dependent place so concurrent processes rarely race for one file.
  const start = (process.pid * 7 + seq * 13) % OCTET_COUNT;
  for (let pass = 0; pass < 2; pass++) {
    for (let j = 0; j < OCTET_COUNT; j++) {
      const octet = OCTET_MIN + ((start + j) % OCTET_COUNT);
      const file = join(dir, `octet-${octet}`);
      if (pass === 1) {
        // second pass: reclaim reservations of dead processes
        try {
          const owner = Number(readFileSync(file, 'utf8').split(' ')[0]);
          if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) unlinkSync(file);
        } catch {
          // vanished or unreadable: just try to take it
        }
      }
      try {
        const fd = openSync(file, 'wx', 0o644);
        writeSync(fd, `${process.pid} ${lanName}\n`);
        closeSync(fd);
        return {
          octet,
          release: () => {
            try {
              if (readFileSync(file, 'utf8').startsWith(`${process.pid} ${lanName}\n`)) unlinkSync(file);
            } catch {
              // already gone
            }
          },
        };
      } catch {
        // taken; try the next
      }
    }
  }
  throw new Error('netns: all subnet octets are reserved');
}

// ---- process/namespace cleanup --------------------------------------------

async function nsPids(ns: string): Promise<number[]> {
  try {
    const out = await ip(['netns', 'pids', ns]);
    return out.split(/\s+/).filter(Boolean).map(Number).filter((p) => Number.isInteger(p) && p > 0);
  } catch {
    return [];
  }
}

async function killNs(ns: string): Promise<void> {
  // A namespace lives on while a process is in it, so kill them all first.
  for (let round = 0; round < 20; round++) {
    const pids = (await nsPids(ns)).filter((p) => p !== process.pid);
    if (pids.length === 0) return;
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function listNs(): Promise<string[]> {
  try {
    const out = await ip(['netns', 'list']);
    return out
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[0])
      .filter((s): s is string => !!s);
  } catch {
    return [];
  }
}

async function deleteNs(ns: string): Promise<void> {
  await killNs(ns);
  try {
    await ip(['netns', 'del', ns]);
  } catch {
    // already gone
  }
}

/**
 * Delete namespaces left behind by earlier test processes that died without
 * tearing down (names `amt-<tag>-<pid>-<seq>-<i|br>` whose pid is dead).
 * Called by createLan; safe to call any time.
 */
export async function cleanupStaleLans(): Promise<string[]> {
  const removed: string[] = [];
  const re = new RegExp(`^${PREFIX}-[a-z0-9]*-([0-9]+)-[0-9]+-(?:[0-9]+|br)$`);
  for (const ns of await listNs()) {
    const m = re.exec(ns);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isAlive(pid)) continue;
    await deleteNs(ns);
    removed.push(ns);
  }
  // and subnet reservations whose owner is dead
  try {
    const dir = reservationDir();
    for (const f of readdirSync(dir)) {
      if (!/^octet-\d+$/.test(f)) continue;
      try {
        const owner = Number(readFileSync(join(dir, f), 'utf8').split(' ')[0]);
        if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && !isAlive(owner)) unlinkSync(join(dir, f));
      } catch {
        // raced with its owner
      }
    }
  } catch {
    // no reservation dir
  }
  return removed;
}

function sanitizeTag(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 8);
}

/**
 * Build a LAN of n hosts. `name` is a short tag; the real name adds the
 * process id and a counter so it is unique per run:
 * `amt-<tag>-<pid>-<seq>`, hosts `<that>-1..n`, bridge `<that>-br`.
 * On any failure everything made so far is removed before rejecting.
 * Always call `down()` (in an after() hook).
 */
export async function createLan(name: string, n: number): Promise<Lan> {
  if (!Number.isInteger(n) || n < 1 || n > MAX_HOSTS) throw new Error(`netns: host count must be 1..${MAX_HOSTS}, got ${n}`);
  const can = canUseNetns();
  if (!can.ok) throw new Error(`netns: ${can.reason}`);
  await cleanupStaleLans();

  seq += 1;
  const full = `${PREFIX}-${sanitizeTag(name)}-${process.pid}-${seq}`;
  const { octet, release } = reserveOctet(full);
  const bridgeNs = `${full}-br`;
  const hosts: LanHost[] = [];
  for (let i = 1; i <= n; i++) hosts.push({ index: i, ns: `${full}-${i}`, addr: `10.${octet}.0.${i}` });

  const created: string[] = [];
  const children = new Set<ChildProcess>();
  let downed = false;

  const host = (i: number): LanHost => {
    const h = hosts[i - 1];
    if (!Number.isInteger(i) || !h) throw new Error(`netns: no host ${i} in LAN ${full} (1..${n})`);
    return h;
  };

  const down = async (): Promise<void> => {
    if (downed) return;
    downed = true;
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) {
        try {
          c.kill('SIGKILL');
        } catch {
          // gone
        }
      }
    }
    // Hosts first, then the bridge; also catch any name created but not recorded.
    const present = new Set(await listNs());
    const names = new Set<string>([...hosts.map((h) => h.ns), bridgeNs, ...created]);
    for (const ns of names) {
      if (present.has(ns) || created.includes(ns)) await deleteNs(ns);
    }
    release();
  };

  try {
    await ip(['netns', 'add', bridgeNs]);
    created.push(bridgeNs);
    await ip(['-n', bridgeNs, 'link', 'set', 'lo', 'up']);
    await ip(['-n', bridgeNs, 'link', 'add', 'br0', 'type', 'bridge', 'mcast_snooping', '0']);
    await ip(['-n', bridgeNs, 'link', 'set', 'br0', 'up']);
    for (const h of hosts) {
      const port = `b${h.index}`;
      await ip(['netns', 'add', h.ns]);
      created.push(h.ns);
      await ip(['-n', h.ns, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', port, 'netns', bridgeNs]);
      await ip(['-n', bridgeNs, 'link', 'set', port, 'master', 'br0']);
      await ip(['-n', bridgeNs, 'link', 'set', port, 'up']);
      await ip(['-n', h.ns, 'link', 'set', 'lo', 'up']);
      await ip(['-n', h.ns, 'addr', 'add', `${h.addr}/24`, 'dev', 'eth0']);
      await ip(['-n', h.ns, 'link', 'set', 'eth0', 'up']);
      await ip(['-n', h.ns, 'route', 'replace', '224.0.0.0/4', 'dev', 'eth0']);
    }
  } catch (e) {
    await down();
    throw e;
  }

  const exec = (i: number, cmd: string, args: readonly string[] = [], opts: SpawnOptions = {}): ChildProcess => {
    const h = host(i);
    if (downed) throw new Error(`netns: LAN ${full} is down`);
    const child = spawn(IP, ['netns', 'exec', h.ns, cmd, ...args], { ...opts, env: lanEnv(opts.env) });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };

  const run = (i: number, cmd: string, args: readonly string[] = [], opts: RunOptions = {}): Promise<RunResult> =>
    new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = exec(i, cmd, args, { env: opts.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (e) {
        reject(e);
        return;
      }
      let stdout = '';
      let stderr = '';
      child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30000);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(opts.input ?? '');
    });

  const cut = async (i: number): Promise<void> => {
    await ip(['-n', host(i).ns, 'link', 'set', 'eth0', 'down']);
  };

  const heal = async (i: number): Promise<void> => {
    const h = host(i);
    await ip(['-n', h.ns, 'link', 'set', 'eth0', 'up']);
    await ip(['-n', h.ns, 'route', 'replace', '224.0.0.0/4', 'dev', 'eth0']);
  };

  return { name: full, octet, hosts, bridgeNs, exec, run, cut, heal, down };
}

/** Names of all namespaces currently present (for tests of teardown). */
export async function listNamespaces(): Promise<string[]> {
  return listNs();
}

