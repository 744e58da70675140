// A real amesh host inside the test process (real libp2p, real LevelDB), for
// tests that must do what a well-behaved host never does: forge packets,
// write malformed frames, carry bad proofs.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as lp from 'it-length-prefixed'
import { pushable } from 'it-pushable'
import { multiaddr } from '@multiformats/multiaddr'
import { defaultConfig, type HostConfig } from '../../src/host/config.js'
import { startHost, type RunningHost as Host } from '../../src/host/components.js'
import { PACKET_PROTOCOL, decodeFrame, type Frame } from '../../src/delivery/frame.js'

export async function startInProcessHost (config: Partial<HostConfig> = {}): Promise<{ host: Host, stop: () => Promise<void> }> {
  const home = mkdtempSync(join(tmpdir(), 'amp-'))
  // no discovery: like the in-process host before the composition root (discovery was installed by the daemon only)
  const host = await startHost({ home, config: { ...defaultConfig(), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false, ...config }, logFile: join(home, 'amesh.log'), discovery: false })
  return {
    host,
    stop: async () => {
      await host.stop()
      rmSync(home, { recursive: true, force: true })
    }
  }
}

/** A raw packet-protocol stream to a peer: write arbitrary frame bytes, read decoded replies. */
export async function rawPacketStream (host: Host, addr: string): Promise<{ write: (bytes: Uint8Array) => void, next: (timeout?: number) => Promise<Frame | 'closed'>, close: () => void }> {
  await host.libp2p.dial(multiaddr(addr))
  const peer = multiaddr(addr).getPeerId()
  if (peer === null) throw new Error('address needs /p2p/')
  const { peerIdFromString } = await import('@libp2p/peer-id')
  const stream = await host.libp2p.dialProtocol(peerIdFromString(peer), PACKET_PROTOCOL)
  const out = pushable<Uint8Array>()
  void stream.sink(lp.encode(out)).catch(() => {})
  const frames: Array<Frame | 'closed'> = []
  const waiters: Array<(f: Frame | 'closed') => void> = []
  const deliver = (f: Frame | 'closed'): void => { const w = waiters.shift(); if (w !== undefined) w(f); else frames.push(f) }
  void (async () => {
    try {
      for await (const chunk of lp.decode(stream.source)) deliver(decodeFrame(chunk.subarray()))
    } catch { /* reset */ }
    deliver('closed')
  })()
  return {
    write: (bytes) => out.push(bytes),
    next: async (timeout = 10_000) => {
      const f = frames.shift()
      if (f !== undefined) return f
      return await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no frame within timeout')), timeout)
        waiters.push((x) => { clearTimeout(t); resolve(x) })
      })
    },
    close: () => { out.end(); stream.abort(new Error('done')) }
  }
}
