/**
 * A throwaway OpenSSH server for tests: fresh host key, fresh user key pair,
 * its own config, authorized_keys and known_hosts in a temp directory, run in
 * the foreground (`sshd -D -e`) on loopback or inside a network namespace made
 * by test/utils/netns.ts. Nothing of the machine's own ssh setup is used or
 * changed (except that the privilege-separation directory /run/sshd is created
 * when missing, which sshd insists on).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const SSHD_PATH = '/usr/sbin/sshd';

export interface StartSshdOptions {
  /** Network namespace to run sshd in (`ip netns exec`); undefined = this namespace. */
  ns?: string;
  /** Address to listen on; default 127.0.0.1. */
  listenAddr?: string;
  /** Port; default: a free one (retried if taken). */
  port?: number;
  /** How long to wait for sshd to listen; default 15000 ms. */
  startTimeoutMs?: number;
}

export interface Sshd {
  /** Address clients use (= listenAddr). */
  host: string;
  port: number;
  /** Login user (the current user, root in CI). */
  user: string;
  /** `user@host`, the ssh destination. */
  destination: string;
  /** Private key that authorized_keys accepts. */
  identityFile: string;
  /** known_hosts holding this server's host key for `[host]:port`. */
  knownHostsFile: string;
  /**
   * Options for the `ssh` client: -F none, -i, IdentitiesOnly, UserKnownHostsFile,
   * GlobalKnownHostsFile=/dev/null, StrictHostKeyChecking=yes, BatchMode=yes,
   * LogLevel=ERROR, -p port. Use as `ssh ...sshOptions destination cmd`.
   */
  sshOptions: string[];
  /** Temp directory holding keys, config and pid file. */
  dir: string;
  /** Pid of the listening sshd. */
  pid: number;
  /** sshd's stderr so far (its log, from -e). */
  log(): string;
  /** Kill sshd and every session process it forked, remove the temp dir. Idempotent. */
  stop(): Promise<void>;
}

let cachedAvail: { ok: boolean; reason?: string } | undefined;

/** Whether startSshd can work here: root, /usr/sbin/sshd, ssh and ssh-keygen present. Cached. */
export function sshdAvailable(): { ok: boolean; reason?: string } {
  if (cachedAvail) return cachedAvail;
  cachedAvail = probe();
  return cachedAvail;
}

function probe(): { ok: boolean; reason?: string } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { ok: false, reason: 'sshd tests need root (privilege-separation dir, login as root); not running as root' };
  }
  try {
    accessSync(SSHD_PATH, fsConstants.X_OK);
  } catch {
    return { ok: false, reason: `${SSHD_PATH} not found (install openssh-server)` };
  }
  for (const cmd of ['ssh', 'ssh-keygen']) {
    try {
      execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'pipe', timeout: 5000 });
    } catch {
      return { ok: false, reason: `'${cmd}' not found on PATH (install openssh-client)` };
    }
  }
  return { ok: true };
}

function run(cmd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 20000, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${String(stderr).trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

function freeLocalPort(addr: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, addr, () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

/** All descendants of pid (Linux /proc), deepest last. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parent.get(ppid) ?? [];
      list.push(Number(e));
      parent.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const c of parent.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

interface Attempt {
  child: ChildProcess;
  log: () => string;
}

function launch(ns: string | undefined, config: string): ChildProcess {
  const args = ['-D', '-e', '-f', config];
  return ns
    ? spawn('ip', ['netns', 'exec', ns, SSHD_PATH, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(SSHD_PATH, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Start sshd and wait for its "Server listening" line; reject if it exits first. */
function startOnce(ns: string | undefined, config: string, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve, reject) => {
    const child = launch(ns, config);
    let stderr = '';
    let settled = false;
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        reject(err);
      } else {
        resolve({ child, log: () => stderr });
      }
    };
    const timer = setTimeout(() => finish(new Error(`sshd did not listen within ${timeoutMs} ms; log:\n${stderr}`)), timeoutMs);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
      if (/Server listening on /.test(stderr)) finish();
    });
    child.once('error', (e) => finish(e));
    child.once('exit', (code, sig) => finish(new Error(`sshd exited (${code ?? sig}) before listening; log:\n${stderr}`)));
  });
}

/**
 * Start a private sshd. Creates keys and config in a fresh temp dir, runs
 * `/usr/sbin/sshd -D -e -f <config>` (inside `opts.ns` when given), waits
 * until it listens, and returns what an ssh client needs. Always `stop()` it.
 */
export async function startSshd(opts: StartSshdOptions = {}): Promise<Sshd> {
  const avail = sshdAvailable();
  if (!avail.ok) throw new Error(`sshd: ${avail.reason}`);
  const host = opts.listenAddr ?? '127.0.0.1';
  const timeoutMs = opts.startTimeoutMs ?? 15000;
  const user = userInfo().username;

  // sshd refuses to start without its privilege-separation directory.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  const dir = await mkdtemp(join(tmpdir(), 'amesh-sshd-'));
  try {
    const hostKey = join(dir, 'host_ed25519');
    const userKey = join(dir, 'id_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'amesh-test-host', '-f', hostKey]);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'amesh-test-user', '-f', userKey]);
    const authorizedKeys = join(dir, 'authorized_keys');
    await writeFile(authorizedKeys, await readFile(`${userKey}.pub`, 'utf8'), { mode: 0o600 });
    const hostPub = (await readFile(`${hostKey}.pub`, 'utf8')).trim().split(/\s+/).slice(0, 2).join(' ');
    const knownHostsFile = join(dir, 'known_hosts');
    const config = join(dir, 'sshd_config');

    const explicitPort = opts.port;
    let lastErr: Error | undefined;
    for (let attempt = 0; attempt < (explicitPort ? 1 : 6); attempt++) {
      const port = explicitPort ?? (opts.ns ? 20000 + Math.floor(Math.random() * 40000) : await freeLocalPort(host));
      await writeFile(
        config,
        [
          `Port ${port}`,
          `ListenAddress ${host}`,
          `HostKey ${hostKey}`,
          `PidFile ${join(dir, 'sshd.pid')}`,
          `AuthorizedKeysFile ${authorizedKeys}`,
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'PermitRootLogin prohibit-password',
          `AllowUsers ${user}`,
          'StrictModes no',
          'UsePAM no',
          'AllowTcpForwarding yes',
          'GatewayPorts no',
          'X11Forwarding no',
          'PermitTunnel no',
          'PrintMotd no',
          'PrintLastLog no',
          'MaxStartups 100',
          'MaxSessions 100',
          'LogLevel INFO',
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      let started: Attempt;
      try {
        started = await startOnce(opts.ns, config, timeoutMs);
      } catch (e) {
        lastErr = e as Error;
        if (/Address already in use/i.test(lastErr.message)) continue;
        throw lastErr;
      }
      const { child, log } = started;
      await writeFile(knownHostsFile, `${knownHostsName(host, port)} ${hostPub}\n`, { mode: 0o600 });
      const pid = child.pid ?? 0;
      let stopped: Promise<void> | undefined;
      const stop = (): Promise<void> => {
        stopped ??= (async () => {
          const kids = descendants(pid);
          const exited = new Promise<void>((r) => {
            if (child.exitCode !== null || child.signalCode !== null) r();
            else child.once('exit', () => r());
          });
          try {
            child.kill('SIGKILL');
          } catch {
            // gone
          }
          for (const k of kids) {
            try {
              process.kill(k, 'SIGKILL');
            } catch {
              // gone
            }
          }
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, 5000)))]);
          clearTimeout(timer);
          await rm(dir, { recursive: true, force: true });
        })();
        return stopped;
      };
      return {
        host,
        port,
        user,
        destination: `${user}@${host}`,
        identityFile: userKey,
        knownHostsFile,
        sshOptions: [
          '-F',
          'none',
          '-i',
          userKey,
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          `UserKnownHostsFile=${knownHostsFile}`,
          '-o',
          'GlobalKnownHostsFile=/dev/null',
          '-o',
          'StrictHostKeyChecking=yes',
          '-o',
          'BatchMode=yes',
          '-o',
          'LogLevel=ERROR',
          '-p',
          String(port),
        ],
        dir,
        pid,
        log,
        stop,
      };
    }
    throw lastErr ?? new Error('sshd: could not start');
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
