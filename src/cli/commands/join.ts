import { bool, needPositionals } from '../args.js'
import type { Command } from '../command.js'
import { connectOrStart } from '../connect.js'
import { printJson, printLine } from '../output.js'

export const join: Command = {
  name: 'join',
  summary: 'connect to another host and remember it',
  usage: 'amesh join MULTIADDR',
  help: `Dials MULTIADDR (e.g. /ip4/10.0.0.2/tcp/4747/p2p/12D3Koo...) now, exchanges node cards,
and remembers the address as a bootstrap peer for later starts.`,
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 1, join.usage)
    const client = await connectOrStart(home)
    try {
      const r = await client.call<{ peerId: string }>('join', { addr: args.positionals[0] })
      if (bool(args, 'json')) printJson(r)
      else printLine(`joined ${r.peerId}`)
      return 0
    } finally {
      client.close()
    }
  }
}
