import * as cbor from '@ipld/dag-cbor'
import type { Libp2p, Stream } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import * as lp from 'it-length-prefixed'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'

// `/amesh/presence/1.0.0` (docs/PROTOCOL.md): whether a session of a node is
// attached now and when one last read and attached, asked of the host that
// serves the node. The dialer writes one length-prefixed CBOR map {n: [node
// ids]}; the listener answers {p: {<node id>: {a: sessions attached, r?: ms of
// the last read, t?: ms of the last attach}}} for those of its local nodes
// among them. The answer is believed only from the peer a node's verified
// card names as its host (the connection authenticates the peer).

export const PRESENCE_PROTOCOL = '/amesh/presence/1.0.0'
const MAX_FRAME = 256 * 1024
const MAX_NODES = 1000
/** how long `nodes` waits for a host's answer */
export const PRESENCE_TIMEOUT = 2 * SECOND

export interface PresenceWire { a: number, r?: number, t?: number }
/** a node's presence as `nodes` shows it (ISO times) */
export interface Presence { attached: number, last_read?: string, last_attach?: string }

export interface PresenceDeps {
  libp2p: Libp2p
  /** the presence of a local node by id, or undefined when it is not one */
  presenceOf: (nodeId: string) => PresenceWire | undefined
  log: Logger
}

async function readOne<T> (stream: Stream): Promise<T> {
  for await (const chunk of lp.decode(stream.source, { maxDataLength: MAX_FRAME })) return cbor.decode<T>(chunk.subarray())
  throw new Error('no frame')
}

const iso = (t: unknown): string | undefined => typeof t === 'number' && Number.isFinite(t) ? new Date(t).toISOString() : undefined

/** Read a host's answer for one node: only well-formed fields are kept. */
function presenceFrom (w: unknown): Presence | undefined {
  if (typeof w !== 'object' || w === null) return undefined
  const { a, r, t } = w as Record<string, unknown>
  if (typeof a !== 'number' || !Number.isSafeInteger(a) || a < 0) return undefined
  const last = iso(r)
  const attach = iso(t)
  return { attached: a, ...(last === undefined ? {} : { last_read: last }), ...(attach === undefined ? {} : { last_attach: attach }) }
}

/** Serves this host's nodes' presence and asks other hosts for theirs. */
export class PresenceLink {
  constructor (private readonly deps: PresenceDeps) {}

  async start (): Promise<void> {
    await this.deps.libp2p.handle(PRESENCE_PROTOCOL, ({ stream, connection }) => { void this.serve(stream, connection.remotePeer.toString()) }, { maxInboundStreams: 32, maxOutboundStreams: 32 })
  }

  async stop (): Promise<void> {
    await this.deps.libp2p.unhandle(PRESENCE_PROTOCOL).catch(() => {})
  }

  private async serve (stream: Stream, remote: string): Promise<void> {
    try {
      const req = await readOne<{ n: unknown }>(stream)
      if (!Array.isArray(req.n) || req.n.length > MAX_NODES) throw new Error('malformed presence request')
      const p: Record<string, PresenceWire> = {}
      for (const id of req.n) {
        const w = typeof id === 'string' ? this.deps.presenceOf(id) : undefined
        if (w !== undefined) p[id as string] = w
      }
      await stream.sink(lp.encode([cbor.encode({ p })]))
    } catch (err) {
      this.deps.log(`presence for ${remote}: ${errorMessage(err)}`)
      stream.abort(new Error('presence exchange failed'))
    }
  }

  /** Ask `host` (a peer id it is connected to) for these nodes' presence; empty when it cannot answer in time. */
  async ask (host: string, nodeIds: string[]): Promise<Map<string, Presence>> {
    const out = new Map<string, Presence>()
    const peer = peerIdFromString(host)
    if (this.deps.libp2p.getConnections(peer).length === 0) return out // not reachable now: unknown, and `nodes` stays fast
    try {
      const signal = AbortSignal.timeout(PRESENCE_TIMEOUT)
      const stream = await this.deps.libp2p.dialProtocol(peer, PRESENCE_PROTOCOL, { signal })
      try {
        await stream.sink(lp.encode([cbor.encode({ n: nodeIds.slice(0, MAX_NODES) })]))
        const late = new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('timed out')), { once: true }))
        late.catch(() => {}) // it rejects after the answer too, when nobody waits on it
        const reply = await Promise.race([readOne<{ p: unknown }>(stream), late])
        const p = typeof reply.p === 'object' && reply.p !== null ? reply.p as Record<string, unknown> : {}
        for (const id of nodeIds) { const v = presenceFrom(p[id]); if (v !== undefined) out.set(id, v) }
      } finally {
        await stream.close().catch(() => {})
      }
    } catch (err) {
      this.deps.log(`presence from ${host}: ${errorMessage(err)}`)
    }
    return out
  }

  /** Rows of `nodes` with each remote node's presence as its host says (rows whose host did not answer keep none). */
  async fill<T extends { id: string, host: string, local: boolean, session?: Presence }> (rows: T[]): Promise<T[]> {
    const byHost = new Map<string, string[]>()
    for (const r of rows) if (!r.local) byHost.set(r.host, [...(byHost.get(r.host) ?? []), r.id])
    const answers = new Map<string, Presence>()
    await Promise.all([...byHost].map(async ([host, ids]) => {
      for (const [id, p] of await this.ask(host, ids)) answers.set(`${host} ${id}`, p)
    }))
    return rows.map((r) => {
      const p = r.local ? undefined : answers.get(`${r.host} ${r.id}`)
      return p === undefined ? r : { ...r, session: p }
    })
  }
}
