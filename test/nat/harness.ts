// Driving real bin/amesh daemons inside the NAT namespaces (test/utils/netns-nat.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { Nat, NatRole } from '../utils/netns-nat.js'
import { NAT_ADDRS } from '../utils/netns-nat.js'
import type { RunResult } from '../utils/netns.js'
import { BIN } from '../discovery/netns-cli.js'

export const PORT = 4001

export interface NatHost { role: NatRole, home: string, peerId: string, addr: string }

export interface Packet { seq: number, id: string, from: string, payload: { text?: string } }

/** Run `amesh ARGS --home HOME` inside the role's namespace; rejects on a non-zero exit unless allowFail. */
export async function am (nat: Nat, role: NatRole, home: string, args: string[], opts: { input?: string, allowFail?: boolean, timeoutMs?: number } = {}): Promise<RunResult> {
  const r = await nat.run(role, process.execPath, [BIN, ...args, '--home', home], { input: opts.input, timeoutMs: opts.timeoutMs ?? 60_000 })
  if (opts.allowFail !== true && r.code !== 0) throw new Error(`amesh ${args.join(' ')} in ${role} exited ${String(r.code)}: ${r.stderr.trim()}`)
  return r
}

export function newHome (role: string, config: Record<string, unknown>): string {
  const home = mkdtempSync(join(tmpdir(), `amnat-${role}-`))
  writeFileSync(join(home, 'config.yaml'), stringify({ listen: [`/ip4/${NAT_ADDRS[role as NatRole]}/tcp/${PORT}`], mdns: false, ...config }))
  return home
}

export async function startHost (nat: Nat, role: NatRole, home: string): Promise<NatHost> {
  const r = await am(nat, role, home, ['up', '--detach', '--json'])
  const id = JSON.parse(r.stdout) as { peerId: string }
  return { role, home, peerId: id.peerId, addr: `/ip4/${NAT_ADDRS[role]}/tcp/${PORT}/p2p/${id.peerId}` }
}

export async function status (nat: Nat, h: NatHost): Promise<StatusRelay> {
  const s = JSON.parse((await am(nat, h.role, h.home, ['status', '--json'])).stdout) as { pid: number, relay: StatusRelay, outbox: { queued: number } }
  return { ...s.relay, pid: s.pid, queued: s.outbox.queued }
}

export interface StatusRelay {
  pid: number
  queued: number
  reachability: string
  relays: Array<{ peer: string, addrs: string[] }>
  refused: Array<{ relay: string, reason: string }>
  connections: Array<{ peer: string, via: string, relay?: string }>
  serving?: { reservations: Array<{ peer: string }> }
}

export async function until<T> (what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, every = 500): Promise<T> {
  const end = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < end) {
    try {
      const v = await check()
      if (v !== undefined && v !== false) return v
    } catch (err) { last = err }
    await new Promise((resolve) => setTimeout(resolve, every))
  }
  throw new Error(`timed out waiting for ${what}${last !== undefined ? `: ${String(last)}` : ''}`)
}

/** Every packet in a node's inbox after seq `after` (0: all of it), paged. */
export async function inbox (nat: Nat, h: NatHost, node: string, after = 0): Promise<Packet[]> {
  const out: Packet[] = []
  for (;;) {
    const from = out.length > 0 ? out[out.length - 1].seq : after
    const r = await am(nat, h.role, h.home, ['inbox', node, '--json', '--after', String(from), '--limit', '1000'])
    const page = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Packet)
    if (page.length === 0) return out
    out.push(...page)
  }
}

/**
 * Wait until `node` holds `n` packets from `from` whose texts start with `prefix`; those texts, in inbox order.
 * Each poll reads only what arrived since the last one (seqs only grow), so the texts are every packet
 * of the inbox, in its order, as one full read would give them, without re-reading megabytes each second.
 */
export async function received (nat: Nat, h: NatHost, node: string, prefix: string, n: number, timeoutMs: number): Promise<string[]> {
  const seen: Packet[] = []
  return await until(`${n} messages "${prefix}…" at ${node}`, async () => {
    seen.push(...await inbox(nat, h, node, seen.length > 0 ? seen[seen.length - 1].seq : 0))
    const texts = seen.map((p) => p.payload.text ?? '').filter((t) => t.startsWith(prefix))
    return texts.length >= n ? texts : undefined
  }, timeoutMs, 1000)
}

/** The i-th message text of a numbered run (zero-padded so order is visible). */
export function numbered (prefix: string, i: number, pad = ''): string {
  return `${prefix}${String(i).padStart(5, '0')}${pad}`
}

export function readLog (h: NatHost): string {
  try { return readFileSync(join(h.home, 'amesh.log'), 'utf8') } catch { return '' }
}

export async function stopAll (nat: Nat, hosts: NatHost[]): Promise<void> {
  await Promise.all(hosts.map(async (h) => await am(nat, h.role, h.home, ['down'], { allowFail: true, timeoutMs: 15_000 }).catch(() => undefined)))
}

export function removeHomes (homes: string[]): void {
  for (const h of homes) rmSync(h, { recursive: true, force: true })
}
