import type { Host } from '../host/host.js'

/** Wire DHT announcement and lookup, and gossip of card updates, into a started host. */
export async function installDiscovery (_host: Host): Promise<void> {
}
