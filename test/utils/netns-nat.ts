/**
 * A real NAT of test hosts in Linux network namespaces, after the pattern of
 * ../shared/tools/netns-nat.sh, in the project's own code:
 *
 *   F-pub     bridge br0: the "internet", 198.18.0.0/24
 *   F-relay   198.18.0.100 (F-relay2 .101, ...) public hosts
 *   F-r1      router: WAN 198.18.0.1, LAN 10.77.1.1; MASQUERADE out of WAN,
 *             FORWARD WAN->LAN only ESTABLISHED,RELATED (no port forwarding)
 *   F-r2      router: WAN 198.18.0.2, LAN 10.77.2.1
 *   F-h1      10.77.1.2 behind F-r1;  F-h2  10.77.2.2 behind F-r2
 *
 * Public hosts have no route to 10.77.0.0/16 and routers have no default
 * route, so a NAT'd host is reachable only through a connection it opened.
 * Every veth is created inside its namespaces: nothing touches the machine's
 * own interfaces, routes or firewall. Needs root and iptables (or nft).
 */
import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { canUseNetns, lanEnv, type RunResult } from './netns.js'

export type NatRole = 'h1' | 'h2' | 'r1' | 'r2' | 'pub' | 'relay' | 'relay2'

export const NAT_ADDRS: Record<NatRole, string> = { h1: '10.77.1.2', h2: '10.77.2.2', r1: '198.18.0.1', r2: '198.18.0.2', pub: '', relay: '198.18.0.100', relay2: '198.18.0.101' }

export interface Nat {
  name: string
  ns: (role: NatRole) => string
  exec: (role: NatRole, cmd: string, args: readonly string[], opts?: SpawnOptions) => ChildProcess
  run: (role: NatRole, cmd: string, args: readonly string[], opts?: { timeoutMs?: number, input?: string }) => Promise<RunResult>
  down: () => Promise<void>
}

let seq = 0

async function sh (cmd: string, args: readonly string[], input?: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { timeout: 15_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${cmd} ${args.join(' ')} failed: ${String(stderr).trim() !== '' ? String(stderr).trim() : err.message}`))
      else resolve(stdout)
    })
    if (input !== undefined) child.stdin?.end(input)
  })
}

/** Root, namespaces, and iptables or nft: else the reason the NAT tests are skipped. */
export function canUseNat (): { ok: boolean, reason?: string } {
  const base = canUseNetns()
  if (!base.ok) return base
  for (const tool of ['iptables', 'nft']) {
    try { execFileSync(tool, ['--version'], { stdio: 'pipe', timeout: 5000 }); return { ok: true } } catch { /* try the next */ }
  }
  return { ok: false, reason: 'the NAT tests need iptables or nft (apt-get install -y iptables)' }
}

function hasIptables (): boolean {
  try { execFileSync('iptables', ['--version'], { stdio: 'pipe', timeout: 5000 }); return true } catch { return false }
}

const NFT_RULES = `table ip amesh_nat {
  chain post { type nat hook postrouting priority srcnat; oifname "wan" masquerade; }
  chain fwd  { type filter hook forward priority filter; policy drop;
               iifname "lan" oifname "wan" accept
               iifname "wan" oifname "lan" ct state established,related accept }
}
`

async function natRules (ns: string): Promise<void> {
  if (hasIptables()) {
    await sh('ip', ['netns', 'exec', ns, 'iptables', '-t', 'nat', '-A', 'POSTROUTING', '-o', 'wan', '-j', 'MASQUERADE'])
    await sh('ip', ['netns', 'exec', ns, 'iptables', '-A', 'FORWARD', '-i', 'lan', '-o', 'wan', '-j', 'ACCEPT'])
    await sh('ip', ['netns', 'exec', ns, 'iptables', '-A', 'FORWARD', '-i', 'wan', '-o', 'lan', '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'])
    await sh('ip', ['netns', 'exec', ns, 'iptables', '-P', 'FORWARD', 'DROP'])
  } else {
    await sh('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], NFT_RULES)
  }
}

async function newNs (ns: string): Promise<void> {
  await sh('ip', ['netns', 'add', ns])
  await sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
}

async function veth (a: string, ifA: string, b: string, ifB: string): Promise<void> {
  await sh('ip', ['-n', a, 'link', 'add', ifA, 'type', 'veth', 'peer', 'name', ifB, 'netns', b])
  await sh('ip', ['-n', a, 'link', 'set', ifA, 'up'])
  await sh('ip', ['-n', b, 'link', 'set', ifB, 'up'])
}

async function build (ns: (r: NatRole) => string, relays: number, made: string[]): Promise<void> {
  const pub = ns('pub')
  await newNs(pub); made.push(pub)
  await sh('ip', ['-n', pub, 'link', 'add', 'br0', 'type', 'bridge'])
  await sh('ip', ['-n', pub, 'link', 'set', 'br0', 'up'])
  for (let i = 1; i <= relays; i++) {
    const role: NatRole = i === 1 ? 'relay' : 'relay2'
    await newNs(ns(role)); made.push(ns(role))
    await veth(ns(role), 'eth0', pub, `p-relay${i}`)
    await sh('ip', ['-n', pub, 'link', 'set', `p-relay${i}`, 'master', 'br0'])
    await sh('ip', ['-n', ns(role), 'addr', 'add', `${NAT_ADDRS[role]}/24`, 'dev', 'eth0'])
  }
  for (const i of [1, 2]) {
    const rt = ns(i === 1 ? 'r1' : 'r2')
    const h = ns(i === 1 ? 'h1' : 'h2')
    await newNs(rt); made.push(rt)
    await newNs(h); made.push(h)
    await veth(rt, 'wan', pub, `p-r${i}`)
    await sh('ip', ['-n', pub, 'link', 'set', `p-r${i}`, 'master', 'br0'])
    await sh('ip', ['-n', rt, 'addr', 'add', `198.18.0.${i}/24`, 'dev', 'wan'])
    await veth(rt, 'lan', h, 'eth0')
    await sh('ip', ['-n', rt, 'addr', 'add', `10.77.${i}.1/24`, 'dev', 'lan'])
    await sh('ip', ['-n', h, 'addr', 'add', `10.77.${i}.2/24`, 'dev', 'eth0'])
    await sh('ip', ['-n', h, 'route', 'add', 'default', 'via', `10.77.${i}.1`])
    await sh('ip', ['netns', 'exec', rt, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'])
    await natRules(rt)
  }
}

async function killAll (ns: string): Promise<void> {
  const pids = (await sh('ip', ['netns', 'pids', ns]).catch(() => '')).split('\n').map((l) => Number(l.trim())).filter((p) => p > 0)
  for (const p of pids) { try { process.kill(p, 'SIGKILL') } catch { /* gone */ } }
}

/** Build the NAT topology (1 or 2 relay hosts); down() kills what runs inside and deletes it all. */
export async function createNat (tag: string, relays = 1): Promise<Nat> {
  const name = `amn${tag}${process.pid.toString(36)}${(seq++).toString(36)}`
  const ns = (r: NatRole): string => `${name}-${r}`
  const made: string[] = []
  const down = async (): Promise<void> => {
    for (const n of made) await killAll(n)
    for (const n of made.reverse()) await sh('ip', ['netns', 'del', n]).catch(() => undefined)
    made.length = 0
  }
  try {
    await build(ns, relays, made)
  } catch (err) {
    await down()
    throw err
  }
  const exec = (role: NatRole, cmd: string, args: readonly string[], opts: SpawnOptions = {}): ChildProcess =>
    spawn('ip', ['netns', 'exec', ns(role), cmd, ...args], { ...opts, env: opts.env ?? lanEnv() })
  const run = async (role: NatRole, cmd: string, args: readonly string[], opts: { timeoutMs?: number, input?: string } = {}): Promise<RunResult> =>
    await new Promise((resolve) => {
      const child = exec(role, cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
      child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000)
      child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }) })
      child.stdin?.end(opts.input ?? '')
    })
  return { name, ns, exec, run, down }
}
