// Simulated link latency per message: @libp2p/memory's own `latency` option
// waits before each buffer in turn (buffer k of a burst arrives after k ×
// latency), so one protocol exchange of many buffers cost many "hops". This
// wrapper gives every buffer its own timer from the moment it was sent: each
// arrives `ms` after it left, in order (Node fires timers of one duration in
// the order they were set), however many are in flight. A dial waits `ms`
// once, like a connection request crossing the link.
import { pushable } from 'it-pushable'
import { memory } from '@libp2p/memory'
import type { MultiaddrConnection, Transport, Upgrader } from '@libp2p/interface'
import type { Uint8ArrayList } from 'uint8arraylist'

type Chunk = Uint8Array | Uint8ArrayList
type Components = Parameters<ReturnType<typeof memory>>[0]

/** `source`, each chunk delivered `ms` after it was read from it; its end (or error) too. */
export function delayEach (source: AsyncIterable<Chunk>, ms: number): AsyncGenerator<Chunk> {
  const out = pushable<Chunk>()
  void (async () => {
    try {
      for await (const chunk of source) setTimeout(() => out.push(chunk), ms)
      setTimeout(() => out.end(), ms)
    } catch (err) {
      setTimeout(() => out.end(err instanceof Error ? err : new Error(String(err))), ms)
    }
  })()
  return out
}

/** An upgrader that delays what arrives on every connection it upgrades (the inbound direction of each end). */
function delayingUpgrader (upgrader: Upgrader, ms: number): Upgrader {
  const delayed = (maConn: MultiaddrConnection): MultiaddrConnection => {
    maConn.source = delayEach(maConn.source, ms)
    return maConn
  }
  return new Proxy(upgrader, {
    get (target, prop, receiver) {
      if (prop === 'upgradeOutbound') return async (maConn: MultiaddrConnection, opts?: Parameters<Upgrader['upgradeOutbound']>[1]) => await target.upgradeOutbound(delayed(maConn), opts)
      if (prop === 'upgradeInbound') return async (maConn: MultiaddrConnection, opts?: Parameters<Upgrader['upgradeInbound']>[1]) => { await target.upgradeInbound(delayed(maConn), opts) }
      const v: unknown = Reflect.get(target, prop, receiver)
      return typeof v === 'function' ? v.bind(target) : v
    }
  })
}

/** libp2p's in-memory transport with `ms` of latency per message and direction (0: the plain transport). */
export function latentMemory (ms: number): (components: Components) => Transport {
  const inner = memory({ latency: 0 })
  if (ms <= 0) return inner
  return (components) => {
    const t = inner(components)
    return new Proxy(t, {
      get (target, prop, receiver) {
        if (prop === 'dial') {
          return async (ma: Parameters<Transport['dial']>[0], options: Parameters<Transport['dial']>[1]) => {
            await new Promise((resolve) => setTimeout(resolve, ms))
            return await target.dial(ma, { ...options, upgrader: delayingUpgrader(options.upgrader, ms) })
          }
        }
        if (prop === 'createListener') {
          return (options: Parameters<Transport['createListener']>[0]) => target.createListener({ ...options, upgrader: delayingUpgrader(options.upgrader, ms) })
        }
        const v: unknown = Reflect.get(target, prop, receiver)
        return typeof v === 'function' ? v.bind(target) : v
      }
    })
  }
}
