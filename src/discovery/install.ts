import type { Host } from '../host/host.js'
import { errorMessage } from '../util/errors.js'
import { Discovery, type DiscoveryOptions } from './discovery.js'
import { SshJoins } from './tunnels.js'

export interface InstalledDiscovery {
  discovery: Discovery
  joins: SshJoins
}

const installed = new WeakMap<Host, InstalledDiscovery>()

/** The discovery parts installed into a host, if any. */
export function discoveryOf (host: Host): InstalledDiscovery | undefined {
  return installed.get(host)
}

/**
 * Wire DHT announcement and lookup, gossip of card updates, card expiry and
 * remembered SSH joins into a started host. `host.announce()` (called when a
 * local node appears) also republishes through the DHT and gossip.
 */
export async function installDiscovery (host: Host, opts: DiscoveryOptions = {}): Promise<InstalledDiscovery> {
  const existing = installed.get(host)
  if (existing !== undefined) return existing
  const discovery = new Discovery(host, opts)
  const joins = new SshJoins(host.db, host.committer, { libp2p: host.libp2p, log: host.log })
  const parts = { discovery, joins }
  installed.set(host, parts)
  host.lookup = async (target) => await discovery.lookup(target)
  const announce = host.announce.bind(host)
  host.announce = () => {
    announce()
    discovery.announce()
  }
  host.libp2p.addEventListener('stop', () => joins.stop(), { once: true })
  await discovery.start()
  void joins.resume().catch((err) => host.log(`ssh joins: ${errorMessage(err)}`))
  return parts
}
