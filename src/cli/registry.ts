// Every CLI command: its name, its one-line summary (for `amesh --help`) and
// how to load it. A command's module loads only when that command runs, so
// `amesh send` does not load the code of `up`, `mcp` or `agent`.
// test/cli/registry.test.ts checks each summary against its command.
import type { Command } from './command.js'

export interface CommandEntry {
  name: string
  summary: string
  load: () => Promise<Command>
}

const basic = async (): Promise<typeof import('./commands/basic.js')> => await import('./commands/basic.js')
const acl = async (): Promise<typeof import('./commands/acl.js')> => await import('./commands/acl.js')
const inboxes = async (): Promise<typeof import('./commands/inbox.js')> => await import('./commands/inbox.js')
const verdicts = async (): Promise<typeof import('./commands/verdict.js')> => await import('./commands/verdict.js')

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'init', summary: 'set up a home (config.yaml) without starting the daemon', load: async () => (await import('./commands/init.js')).init },
  { name: 'up', summary: 'start this host\'s amesh daemon', load: async () => (await import('./commands/up.js')).up },
  { name: 'down', summary: 'stop this host\'s daemon', load: async () => (await basic()).down },
  { name: 'status', summary: 'host pid, id, addresses, peers, nodes, queue sizes', load: async () => (await basic()).status },
  { name: 'id', summary: 'this host\'s peer id and addresses', load: async () => (await basic()).id },
  { name: 'join', summary: 'connect to another host (by address or through ssh) and remember it', load: async () => (await import('./commands/join.js')).join },
  { name: 'peers', summary: 'connected and remembered peer hosts', load: async () => (await import('./commands/peers.js')).peers },
  { name: 'node', summary: 'create, list or remove nodes of this host (also external A2A agents)', load: async () => (await basic()).node },
  { name: 'nodes', summary: 'cards known here (local and remote)', load: async () => (await basic()).nodes },
  { name: 'card', summary: 'resolve one node\'s signed AgentCard', load: async () => (await basic()).card },
  { name: 'send', summary: 'send a message (durable before it returns), or broadcast it to a group', load: async () => (await import('./commands/send.js')).send },
  { name: 'inbox', summary: 'read a node\'s inbox', load: async () => (await inboxes()).inbox },
  { name: 'ack', summary: 'move a node\'s durable inbox cursor', load: async () => (await basic()).ack },
  { name: 'receipt', summary: 'what became of a message this host sent: delivered, pushed, read, refused, dead', load: async () => (await import('./commands/receipt.js')).receipt },
  { name: 'outbox', summary: 'inspect the outbox (dead letters)', load: async () => (await inboxes()).outbox },
  { name: 'grant', summary: 'let another node send to one of yours (a signed capability token)', load: async () => (await acl()).grant },
  { name: 'revoke', summary: 'revoke a grant (and every delegation through it)', load: async () => (await acl()).revoke },
  { name: 'grants', summary: 'grants held and issued on this host', load: async () => (await acl()).grants },
  { name: 'block', summary: 'refuse all packets from a sender (beats any grant or group)', load: async () => (await acl()).block },
  { name: 'unblock', summary: 'lift a block', load: async () => (await acl()).unblock },
  { name: 'profile', summary: 'set a node\'s access-matrix profile (only narrows)', load: async () => (await acl()).profile },
  { name: 'mcp', summary: 'MCP stdio server that attaches a Claude Code session as a node', load: async () => (await import('./commands/mcp.js')).mcp },
  { name: 'approve', summary: 'allow a permission request relayed from a Claude Code session', load: async () => (await verdicts()).approve },
  { name: 'deny', summary: 'deny a permission request relayed from a Claude Code session', load: async () => (await verdicts()).deny },
  { name: 'agent', summary: 'managed nodes: start from a spec, stop, list, logs', load: async () => (await import('./commands/agent.js')).agent },
  { name: 'acp-bridge', summary: 'drive an ACP agent as a managed node (started by amesh for runtime: acp)', load: async () => (await import('./commands/acp-bridge.js')).acpBridge }
]
