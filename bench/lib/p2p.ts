// A raw libp2p 2.x node with amesh's transport stack (tcp + noise + yamux),
// no discovery, no DHT, limits raised for benchmarking on loopback.
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'

export const ECHO_PROTOCOL = '/amesh-bench/echo/1.0.0'
export const SINK_PROTOCOL = '/amesh-bench/sink/1.0.0'
export const STREAM_LIMITS = { maxInboundStreams: 1024, maxOutboundStreams: 1024 }

export async function createBenchNode (): Promise<Libp2p> {
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: {
      maxConnections: 1000,
      inboundConnectionThreshold: 1000,
      maxIncomingPendingConnections: 1000
    }
  })
}

/** A payload of `size` bytes with varying content. */
export function payload (size: number): Uint8Array {
  const buf = new Uint8Array(size)
  for (let i = 0; i < size; i++) buf[i] = (i * 31 + 7) & 0xff
  return buf
}
