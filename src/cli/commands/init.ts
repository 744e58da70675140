import { DEFAULT_LISTEN, initHome, isInitialised } from '../../control/home.js'
import { homePaths } from '../../control/paths.js'
import { bool, list, needPositionals } from '../args.js'
import type { Command } from '../command.js'
import { printJson, printLine } from '../output.js'

export const init: Command = {
  name: 'init',
  summary: 'set up a home (config.yaml) without starting the daemon',
  usage: 'amesh init [--listen MULTIADDR]... [--no-mdns] [--json]',
  help: `Creates the home (mode 0700) and its config.yaml, recording the listen addresses and the
mDNS setting a daemon started for this home uses — the same defaults as \`amesh up\`
(/ip4/0.0.0.0/tcp/4747, mDNS on). Commands that change state (send, node add, grant, …)
start a daemon by themselves only on a home set up this way (or by \`amesh up\` or
\`amesh mcp install\`); a missing or mistyped --home is an error instead. An existing
config.yaml is left as it is.

  --listen MULTIADDR   listen address to record (repeatable); default /ip4/0.0.0.0/tcp/4747
  --no-mdns            record mdns: false (no LAN discovery)`,
  flags: { listen: 'list', 'no-mdns': 'boolean' },
  run: async (args, home) => {
    needPositionals(args, 0, init.usage)
    const listen = list(args, 'listen')
    const existed = isInitialised(home)
    const wrote = initHome(home, { listen: listen.length > 0 ? listen : DEFAULT_LISTEN, mdns: !bool(args, 'no-mdns') })
    const config = homePaths(home).config
    if (bool(args, 'json')) printJson({ home, config, created: wrote })
    else printLine(existed ? `${home} is already set up (${config} kept)` : `set up ${home} (${config})`)
    return 0
  }
}
