import { ControlClient } from '../../control/client.js'
import { homePaths } from '../../control/paths.js'
import { DaemonNotRunningError, InvalidArgumentError } from '../../util/errors.js'
import { processAlive } from '../../util/process-alive.js'
import { bool, needPositionals, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { callDaemon, queryDaemon } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'

import type { NodeRow, StatusResult } from '../../control/wire.js'

export const down: Command = {
  name: 'down',
  summary: 'stop this host\'s daemon',
  usage: 'amesh down',
  help: 'Stops the daemon for the home gracefully (the store is flushed and closed, the lock released).',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 0, down.usage)
    let client: ControlClient
    try {
      client = await ControlClient.connect(homePaths(home).socket)
    } catch (err) {
      if (err instanceof DaemonNotRunningError) { printLine(`amesh is not running for ${home}`); return 0 }
      throw err
    }
    const status = await client.call('status')
    await client.call('shutdown')
    client.close()
    await waitExit(status.pid)
    if (bool(args, 'json')) printJson({ stopped: true, pid: status.pid })
    else printLine(`amesh stopped (pid ${status.pid})`)
    return 0
  }
}

async function waitExit (pid: number, timeout = 20_000): Promise<void> {
  const deadline = Date.now() + timeout
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new DaemonNotRunningError(`the daemon (pid ${pid}) did not exit within ${timeout} ms`)
}

/** The relay lines of `amesh status`: reachability, relays in use, refusals, each peer direct or relayed, what a relay serves. */
function printRelay (r: StatusResult['relay']): void {
  if (r === undefined) return
  printLine(`reachability ${r.reachability}${r.nat !== undefined ? `  (seen as ${r.nat.observed} by ${r.nat.by})` : ''}`)
  for (const x of r.relays) printLine(`relay ${x.peer}  reserved  ${x.addrs.join(' ')}`)
  for (const x of r.refused) printLine(`relay ${x.relay}  refused  ${x.reason}`)
  for (const c of r.connections) printLine(`peer ${c.peer}  ${c.via}${c.relay !== undefined ? ` via ${c.relay}` : ''}`)
  if (r.connections.some((c) => c.via === 'relayed')) printLine(`hole punching: ${r.hole_punching}`)
  const s = r.serving
  if (s !== undefined) printLine(`serving as relay  accept ${s.accept}  reservations ${s.reservations.length}/${s.max_reservations}  limits ${s.limits.duration_ms} ms, ${s.limits.data_bytes} bytes per connection`)
}

export const status: Command = {
  name: 'status',
  summary: 'host pid, id, addresses, peers, nodes, queue sizes',
  usage: 'amesh status [--json]',
  help: 'Shows the daemon pid, peer id, addresses, connected peers, local nodes with their inbox\ndepths, outbox depths per destination, dead letters and store size; reachability (public,\nprivate, unknown), the relays this host holds a reservation on or was refused by (with the\nreason), each connected peer direct or relayed, and what it serves as a relay (--json: relay).',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 0, status.usage)
    const s = await queryDaemon(home, 'status')
    if (bool(args, 'json')) { printJson(s); return 0 }
    printLine(`pid ${String(s.pid)}  peer ${String(s.peerId)}`)
    printLine(`addrs ${(s.addrs as string[]).join(' ')}`)
    printLine(`peers ${(s.peers as string[]).length}  outbox queued ${s.outbox.queued}  dead ${s.outbox.dead}  store ${String(s.store_bytes)} bytes`)
    const store = s.store
    printLine(`store ${store.state}${store.free_bytes !== undefined ? `  free ${store.free_bytes} bytes` : ''}${store.error !== undefined ? `  ${store.error.code}: ${store.error.message}` : ''}`)
    printRelay(s.relay)
    const a2a = s.a2a as { base_url: string | null, warning: string | null } | undefined
    if (a2a?.base_url != null) printLine(`a2a ${a2a.base_url}/nodes/NAME/${a2a.warning !== null ? `  WARNING: ${a2a.warning}` : ''}`)
    for (const n of s.nodes) {
      const i = n.inbox
      printLine('error' in i ? `node ${n.name}  ${n.id}  inbox unreadable now: ${i.error}` : `node ${n.name}  ${n.id}  inbox last ${i.last} cursor ${i.cursor} unacked ${i.unacked}`)
    }
    return 0
  }
}

export const id: Command = {
  name: 'id',
  summary: 'this host\'s peer id and addresses',
  usage: 'amesh id [--json]',
  help: 'Prints {"peerId": "...", "addrs": ["..."]} with --json; addresses include /p2p/<peer id>.',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 0, id.usage)
    const r = await queryDaemon(home, 'id')
    if (bool(args, 'json')) printJson(r)
    else printLine(`${r.peerId}\n${r.addrs.join('\n')}`)
    return 0
  }
}

/** Presence of a local node: whether a session is attached now, when one last read. */
function sessionText (s: NodeRow['session']): string {
  if (s === undefined) return ''
  return `  session ${s.attached > 0 ? `attached (${s.attached})` : 'none'}${s.last_read === undefined ? '' : `, last read ${s.last_read}`}`
}

export const nodes: Command = {
  name: 'nodes',
  summary: 'cards known here (local and remote)',
  usage: 'amesh nodes [--json]',
  help: 'Lists the nodes of this host and the remote nodes whose signed cards this host knows,\nwith kind (external/managed), serving host and parent, and whether a session is attached now\nand when one last read (session.attached, session.last_read): for remote nodes as their host\nanswers (asked when connected; no session when it did not answer). --json prints one object per line.',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 0, nodes.usage)
    const rows = await queryDaemon(home, 'nodes')
    for (const r of rows) {
      if (bool(args, 'json')) printJson(r)
      else printLine(`${r.local ? 'local ' : 'remote'} ${r.name}  ${r.kind}  ${r.id}${r.parent !== undefined ? `  parent ${r.parent}` : ''}${r.local ? '' : `  host ${r.host}`}${sessionText(r.session)}`)
    }
    return 0
  }
}

const NODE_USAGE = `amesh node add NAME [--parent NODE] [--json]
       amesh node add-a2a NAME URL [--parent NODE] [--json]
       amesh node ls [--json]
       amesh node rm NAME [--force] [--json]`

async function nodeAdd (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 2, NODE_USAGE)
  const r = await callDaemon(home, 'node.add', { name: args.positionals[1], parent: str(args, 'parent') })
  if (bool(args, 'json')) printJson(r)
  else printLine(`${r.name} ${r.id}${r.parent !== undefined ? ` (child of ${r.parent}, depth ${r.depth})` : ''}`)
  return 0
}

async function nodeAddA2a (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 3, NODE_USAGE)
  const r = await callDaemon(home, 'node.add_a2a', { name: args.positionals[1], url: args.positionals[2], parent: str(args, 'parent') })
  if (bool(args, 'json')) printJson(r)
  else printLine(`${r.name} ${r.id}: A2A agent "${r.agent}" (${r.interfaces.map((i) => `${i.binding} ${i.url}`).join(', ')}${r.streaming ? ', streaming' : ''})${r.parent !== undefined ? `, child of ${r.parent}` : ''}`)
  return 0
}

function when (ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString()
}

async function nodeLs (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 1, NODE_USAGE)
  const rows = await queryDaemon(home, 'node.list')
  for (const r of rows) {
    if (bool(args, 'json')) printJson(r)
    else printLine(`${r.name.padEnd(16)} ${r.kind.padEnd(8)} parent ${(r.parent ?? '-').padEnd(12)} created ${when(r.created)}  last received ${when(r.last_received)}  unread ${r.unread}  ${r.id}${r.url !== undefined ? `  ${r.url}` : ''}`)
  }
  return 0
}

async function nodeRm (args: Parsed, home: string): Promise<number> {
  needPositionals(args, 2, NODE_USAGE)
  const r = await callDaemon(home, 'node.rm', { name: args.positionals[1], force: bool(args, 'force') ? true : undefined })
  if (bool(args, 'json')) printJson(r)
  else printLine(`removed ${r.removed} (${r.id}): its key, cursor and ${r.inbox_entries} inbox entries`)
  return 0
}

export const node: Command = {
  name: 'node',
  summary: 'create, list or remove nodes of this host (also external A2A agents)',
  usage: NODE_USAGE,
  help: `node add NAME [--parent NODE] creates a node (a key, an id, an inbox) on this host. With
--parent, the parent node (on this host) signs a lineage certificate: the two form a group.
Nodes are also created implicitly on first use of a name (send --as, mcp --name).

node add-a2a NAME URL [--parent NODE] registers an external A2A agent as a node of this host
(kind a2a). URL is the agent's card URL (ending in .json) or its base URL (the card is then
read from /.well-known/agent-card.json). The daemon fetches the card and checks it with the
A2A SDK (an AgentCard offering a JSONRPC or HTTP+JSON interface); on any failure it says why
(A2A_BAD_URL, A2A_CARD_FETCH, A2A_NOT_AN_AGENT, A2A_NO_TRANSPORT) and stores nothing.
\`amesh send --to NAME\` then queues the message durably and this host sends it with an A2A
client, retrying while the agent is unreachable, until its TTL; the agent's answers arrive in
the sender's inbox from NAME (RETURN, ERROR, ESCALATE, BLOCKED_ON, MESSAGE; docs/A2A.md, "Outbound").
Sending to NAME needs the same permission as sending to a local node: a group (--parent) or a
grant issued as NAME (\`amesh grant --as NAME --to SENDER\`). An a2a node cannot send.

node ls lists this host's nodes: kind (external/managed/a2a), parent, when it was created, when
it last received a message, how many are unread; an a2a node also its card URL.

node rm NAME removes a node: its key, its inbox and its cursor. It refuses a managed node
that is running (\`amesh agent stop NAME\` first), a node that is the parent of other local
nodes, and — unless --force — a node with unread messages. Its card may stay known to other
hosts until it expires; grants naming it stop working since its key is gone. For an a2a
node, its open tasks are forgotten and what is still queued for it becomes dead letters
(A2A_AGENT_GONE) with ERROR notices to the senders.`,
  flags: { parent: 'string', force: 'boolean' },
  run: async (args, home) => {
    const sub = args.positionals[0]
    if (sub === 'add') return await nodeAdd(args, home)
    if (sub === 'add-a2a') return await nodeAddA2a(args, home)
    if (sub === 'ls') return await nodeLs(args, home)
    if (sub === 'rm') return await nodeRm(args, home)
    throw new InvalidArgumentError(`${sub === undefined ? 'missing subcommand' : `unknown subcommand node ${sub}`}; usage: ${NODE_USAGE}`)
  }
}

export const card: Command = {
  name: 'card',
  summary: 'resolve one node\'s signed AgentCard',
  usage: 'amesh card NAME|ID [--json]',
  help: 'Resolves a node (local, known, connected hosts, then the DHT) and prints its signed A2A AgentCard.',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 1, card.usage)
    const c = await queryDaemon(home, 'card', { target: args.positionals[0] })
    if (bool(args, 'json')) printJson(c)
    else printLine(JSON.stringify(c, null, 2))
    return 0
  }
}

export const ack: Command = {
  name: 'ack',
  summary: 'move a node\'s durable inbox cursor',
  usage: 'amesh ack NODE SEQ',
  help: 'Marks everything in NODE\'s inbox up to and including SEQ read (handled). The cursor is durable and\nnever moves backward; unread packets are pushed again to the next session (docs/DELIVERY.md).',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 2, ack.usage)
    const seq = Number(args.positionals[1])
    if (!Number.isSafeInteger(seq) || seq < 0) throw new InvalidArgumentError('SEQ must be a non-negative integer')
    const r = await callDaemon(home, 'ack', { node: args.positionals[0], seq })
    if (bool(args, 'json')) printJson(r)
    else printLine(`cursor ${r.cursor}`)
    return 0
  }
}
