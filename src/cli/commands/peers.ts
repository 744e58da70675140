import { needPositionals, bool } from '../args.js'
import type { Command } from '../command.js'
import { queryDaemon } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'


export const peers: Command = {
  name: 'peers',
  summary: 'connected and remembered peer hosts',
  usage: 'amesh peers [--json]',
  help: `Lists the hosts this daemon is connected to now (address, inbound/outbound, direct or
relayed through a circuit relay, and --json: the connection's encryption, /noise end to end
also through a relay) and the peer addresses it dials at every start: remembered by \`amesh join\`
(\`amesh join --forget ADDR\` removes one) and configured (\`peers:\` in config.yaml, --peer).
--json prints one object: {"connected": [...], "remembered": [...], "configured": [...]}.
Never starts a daemon.`,
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 0, peers.usage)
    const r = await queryDaemon(home, 'peers')
    if (bool(args, 'json')) { printJson(r); return 0 }
    for (const c of r.connected) printLine(`connected  ${c.peer}  ${c.direction}  ${c.relayed ? 'relayed' : 'direct'}  ${c.encryption ?? ''}  ${c.addrs.join(' ')}`)
    for (const a of r.remembered) printLine(`remembered ${a}`)
    for (const a of r.configured) printLine(`configured ${a}`)
    if (r.connected.length + r.remembered.length + r.configured.length === 0) printLine('no peers')
    return 0
  }
}
