// Responder host for B_rtt / B_stream. Echo protocol: every length-prefixed
// frame is sent straight back. Sink protocol: count frames until the writer
// closes, then answer one frame with JSON {count, bytes}.
import * as lp from 'it-length-prefixed'
import type { Stream } from '@libp2p/interface'
import { createBenchNode, ECHO_PROTOCOL, SINK_PROTOCOL, STREAM_LIMITS } from '../lib/p2p.js'
import { onStop, report, runWorker } from '../lib/worker.js'

async function echo (stream: Stream): Promise<void> {
  await stream.sink(lp.encode(lp.decode(stream.source)))
}

async function sink (stream: Stream): Promise<void> {
  let count = 0
  let bytes = 0
  for await (const frame of lp.decode(stream.source)) {
    count++
    bytes += frame.byteLength
  }
  const answer = new TextEncoder().encode(JSON.stringify({ count, bytes }))
  await stream.sink(lp.encode([answer]))
}

function guard (work: Promise<void>, stream: Stream): void {
  work.catch((err: unknown) => { stream.abort(err instanceof Error ? err : new Error(String(err))) })
}

runWorker(async () => {
  const node = await createBenchNode()
  await node.handle(ECHO_PROTOCOL, ({ stream }) => { guard(echo(stream), stream) }, STREAM_LIMITS)
  await node.handle(SINK_PROTOCOL, ({ stream }) => { guard(sink(stream), stream) }, STREAM_LIMITS)
  onStop(async () => { await node.stop() })
  const addrs = node.getMultiaddrs().map(a => a.toString())
  await report({ type: 'ready', data: { addrs, peerId: node.peerId.toString() } })
})
