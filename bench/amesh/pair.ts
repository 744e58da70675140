// Two hosts on loopback: receiver B (node rx) and sender A (node tx, bootstrapped to B).
import { Daemon, stopAll, type Durability } from '../lib/daemon.js'
import type { BenchContext } from '../lib/types.js'

export interface Pair { a: Daemon, b: Daemon, stop: () => Promise<void> }

export const TX = 'tx'
export const RX = 'rx'

export async function startPair (ctx: BenchContext, label: string, durability: Durability = 'batch'): Promise<Pair> {
  const b = await Daemon.start(ctx, `${label}-b`, { durability })
  let a: Daemon | undefined
  try {
    await b.ensureNode(RX)
    a = await Daemon.start(ctx, `${label}-a`, { durability, peers: [b.addr] })
    await a.ensureNode(TX)
    await a.waitKnows(RX)
    await b.waitKnows(TX)
    await b.grant(RX, TX)
  } catch (err) {
    await stopAll(a === undefined ? [b] : [a, b])
    throw err
  }
  const both = [a, b]
  return { a, b, stop: async () => { await stopAll(both) } }
}
