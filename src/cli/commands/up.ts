import { spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { a2aFromFlag, loadConfigFile, mdnsFromEnv, parseDurability, type HostConfig } from '../../host/config.js'
import { homePaths } from '../../control/paths.js'
import { initHome } from '../../control/home.js'
import { checkPeerAddr } from '../../control/peer-addr.js'
import { bool, list, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { BIN, waitForDaemon } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'
import { AlreadyRunningError, firstStartFailure, runningDaemonPid, snapshotHome, undoFirstStart, type HomeSnapshot } from './up-guard.js'
import { EXIT_STORE_FAULT } from '../../util/exit-codes.js'
import { StoreFaultError, errorMessage } from '../../util/errors.js'

/** The config and flags without the environment's mDNS override: what a new home records. */
function settingsFor (args: Parsed, home: string): HostConfig {
  const cfg = loadConfigFile(homePaths(home).config)
  const listen = list(args, 'listen')
  if (listen.length > 0) cfg.listen = listen
  if (bool(args, 'no-mdns')) cfg.mdns = false
  return cfg
}

function configFor (args: Parsed, home: string): HostConfig {
  const cfg = settingsFor(args, home)
  for (const p of cfg.peers) checkPeerAddr(p, { flag: 'config peers' })
  for (const p of list(args, 'peer')) checkPeerAddr(p, { flag: '--peer' })
  cfg.peers = [...cfg.peers, ...list(args, 'peer')]
  cfg.mdns = mdnsFromEnv(cfg.mdns)
  if (bool(args, 'relay')) cfg.relay = { ...cfg.relay, serve: true }
  for (const r of list(args, 'via-relay')) checkPeerAddr(r, { flag: '--via-relay' })
  cfg.relays = [...cfg.relays, ...list(args, 'via-relay')]
  const durability = str(args, 'durability')
  if (durability !== undefined) cfg.durability = parseDurability(durability)
  const a2a = str(args, 'a2a')
  if (a2a !== undefined) cfg.a2a = a2aFromFlag(a2a, cfg.a2a)
  return cfg
}

/** The flags to hand to the background process: all but --detach and --home. */
function childArgs (args: Parsed): string[] {
  const out: string[] = []
  for (const [name, value] of args.flags) {
    if (name === 'detach' || name === 'home' || name === 'json') continue
    if (value === true) out.push(`--${name}`)
    else if (Array.isArray(value)) for (const v of value) out.push(`--${name}`, v)
    else if (typeof value === 'string') out.push(`--${name}`, value)
  }
  return out
}

async function detach (args: Parsed, home: string): Promise<number> {
  const paths = homePaths(home)
  const log = openSync(paths.log, 'a', 0o600)
  const { daemonEnv, daemonNodeFlags } = await import('../../host/heap.js')
  const child = spawn(process.execPath, [...daemonNodeFlags(), BIN, 'up', ...childArgs(args), '--home', home], {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, ...daemonEnv(), AMESH_LOG_FILE: paths.log }
  })
  let exitCode: number | null = null
  child.on('exit', (code) => { exitCode = code ?? 1 })
  const client = await waitForDaemon(home, () => exitCode).catch((err: unknown) => {
    // the daemon could not open a full or faulted store: keep its distinct status (main maps the code)
    throw exitCode === EXIT_STORE_FAULT ? new StoreFaultError(errorMessage(err), { cause: err }) : err
  })
  const { pid } = await client.call('status')
  const id = await client.call('id')
  client.close()
  // another `up` won a race for this home: ours fails on the lock; report the winner
  if (pid !== child.pid) throw new AlreadyRunningError(home, pid)
  child.unref()
  if (bool(args, 'json')) printJson({ pid: child.pid, ...id })
  else printLine(`amesh is up (pid ${child.pid ?? '?'}), peer ${id.peerId}\n  ${id.addrs.join('\n  ')}\nlogs: ${paths.log}`)
  return 0
}

async function foreground (config: HostConfig, home: string, before: HomeSnapshot): Promise<number> {
  const { tuneHeap } = await import('../../host/heap.js')
  tuneHeap()
  const { tuneJit } = await import('../../host/jit.js')
  tuneJit()
  // the daemon stack (libp2p, LevelDB) loads only for `up`, not for every CLI call
  const { runDaemon } = await import('../../host/daemon.js')
  let daemon
  try {
    daemon = await runDaemon({ home, config, logFile: process.env.AMESH_LOG_FILE })
  } catch (err) {
    undoFirstStart(home, before)
    throw firstStartFailure(err, config.listen)
  }
  const id = daemon.host.libp2p.peerId.toString()
  process.stderr.write(`amesh is up, peer ${id}\n  ${daemon.host.libp2p.getMultiaddrs().map(String).join('\n  ')}\n`)
  await daemon.stopped
  return 0
}

export const up: Command = {
  name: 'up',
  summary: 'start this host\'s amesh daemon',
  usage: 'amesh up [--listen MULTIADDR]... [--peer MULTIADDR]... [--no-mdns] [--durability always|batch|none] [--relay] [--via-relay MULTIADDR]... [--a2a HOST:PORT] [--detach]',
  help: `Starts the host daemon for the home: a libp2p peer (TCP, Noise, Yamux, Kademlia DHT,
mDNS, gossipsub), the LevelDB store and the control socket. Runs in the foreground
until SIGINT/SIGTERM or \`amesh down\`; with --detach it runs in the background and logs
to <home>/amesh.log once it is ready (or says why it failed). A second \`amesh up\` on a home
whose daemon runs exits non-zero naming that daemon's pid and touches nothing of it.

Settings come from <home>/config.yaml (see docs/CONFIGURATION.md), then these flags. On a
home with no config.yaml, \`up\` writes one recording the listen addresses and mDNS setting
it starts with (like \`amesh init\`), so that later commands may start the daemon again with
the same settings. A first start that fails removes what it created.

  --listen MULTIADDR   listen address (repeatable); default /ip4/0.0.0.0/tcp/4747
  --peer MULTIADDR     bootstrap peer (repeatable), e.g. /ip4/10.0.0.2/tcp/4747/p2p/12D3Koo...
  --no-mdns            no LAN discovery (also: mdns: false in config.yaml, AMESH_MDNS=off)
  --durability MODE    always | batch (default) | none — see docs/CONFIGURATION.md
  --relay              serve as a circuit relay for hosts behind a NAT (relay.serve: true; its
                       limits and who may reserve: relay: in config.yaml, docs/DISCOVERY.md)
  --via-relay MULTIADDR  a relay to keep connected and reserve a slot on while this host is not
                       publicly reachable (repeatable; also relays: in config.yaml). A bootstrap
                       peer that serves as a relay is used the same way without this flag.
  --a2a HOST:PORT      serve the A2A 1.0 face there (off by default; also a2a: {listen} in
                       config.yaml); use a loopback address unless a2a.cert/key are set (docs/A2A.md)
  --detach             run in the background (node --max-semi-space-size=8: a smaller young
                       generation, docs/CONFIGURATION.md Memory); print the peer id and addresses, then exit`,
  flags: { listen: 'list', peer: 'list', 'no-mdns': 'boolean', durability: 'string', detach: 'boolean', relay: 'boolean', 'via-relay': 'list', a2a: 'string' },
  run: async (args, home) => {
    // read once, before anything is created: bad flags or config fail here
    const settings = settingsFor(args, home)
    const config = configFor(args, home)
    const running = await runningDaemonPid(home)
    if (running !== undefined) throw new AlreadyRunningError(home, running)
    const before = snapshotHome(home)
    initHome(home, { listen: settings.listen, mdns: settings.mdns })
    if (!bool(args, 'detach')) return await foreground(config, home, before)
    try {
      return await detach(args, home)
    } catch (err) {
      undoFirstStart(home, before)
      throw err
    }
  }
}
