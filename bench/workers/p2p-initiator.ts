// Initiator host for B_rtt / B_stream. Args: {addr, mode: 'rtt'|'stream',
// count, size, warmup, reps}. Reports {samples} (rtt, ms) or, for 'stream',
// {elapsedMs: [one per rep], count, bytes} (count/bytes of one rep).
import * as lp from 'it-length-prefixed'
import { pushable, type Pushable } from 'it-pushable'
import { multiaddr } from '@multiformats/multiaddr'
import type { Libp2p } from 'libp2p'
import type { Stream } from '@libp2p/interface'
import { createBenchNode, ECHO_PROTOCOL, payload, SINK_PROTOCOL } from '../lib/p2p.js'
import { nowMs } from '../lib/stats.js'
import { argNum, argStr, finish, runWorker, workerArgs } from '../lib/worker.js'

const QUEUE_ITEMS = 32

interface Writer { out: Pushable<Uint8Array>, sending: Promise<void> }

function writer (stream: Stream): Writer {
  const out = pushable<Uint8Array>({ objectMode: true })
  return { out, sending: stream.sink(lp.encode(out)) }
}

async function roundTrips (node: Libp2p, addr: string, count: number, data: Uint8Array): Promise<number[]> {
  const stream = await node.dialProtocol(multiaddr(addr), ECHO_PROTOCOL)
  const { out, sending } = writer(stream)
  const replies = lp.decode(stream.source)[Symbol.asyncIterator]()
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    const t0 = nowMs()
    out.push(data)
    const reply = await replies.next()
    samples.push(nowMs() - t0)
    if (reply.done === true || reply.value.byteLength !== data.byteLength) throw new Error('bad echo')
  }
  out.end()
  await sending
  return samples
}

interface SinkAnswer { count: number, bytes: number }

async function oneWay (node: Libp2p, addr: string, count: number, data: Uint8Array): Promise<SinkAnswer> {
  const stream = await node.dialProtocol(multiaddr(addr), SINK_PROTOCOL)
  const { out, sending } = writer(stream)
  for (let i = 0; i < count; i++) {
    out.push(data)
    if (out.readableLength >= QUEUE_ITEMS) await out.onEmpty()
  }
  out.end()
  await sending
  for await (const frame of lp.decode(stream.source)) {
    const answer = JSON.parse(new TextDecoder().decode(frame.subarray())) as SinkAnswer
    if (answer.count !== count) throw new Error(`sink counted ${answer.count} of ${count}`)
    return answer
  }
  throw new Error('sink closed without an answer')
}

runWorker(async () => {
  const args = workerArgs()
  const addr = argStr(args, 'addr')
  const mode = argStr(args, 'mode')
  const count = argNum(args, 'count')
  const warmup = argNum(args, 'warmup', Math.ceil(count / 10))
  const data = payload(argNum(args, 'size'))
  const node = await createBenchNode()
  if (mode === 'rtt') {
    await roundTrips(node, addr, warmup, data)
    const samples = await roundTrips(node, addr, count, data)
    await node.stop()
    await finish({ type: 'result', data: { samples } })
  }
  if (mode !== 'stream') throw new Error(`unknown mode ${mode}`)
  await oneWay(node, addr, warmup, data)
  const elapsedMs: number[] = []
  let answer: SinkAnswer = { count: 0, bytes: 0 }
  for (let rep = 0; rep < argNum(args, 'reps', 1); rep++) {
    const t0 = nowMs()
    answer = await oneWay(node, addr, count, data)
    elapsedMs.push(nowMs() - t0)
  }
  await node.stop()
  await finish({ type: 'result', data: { elapsedMs, count: answer.count, bytes: answer.bytes } })
})
