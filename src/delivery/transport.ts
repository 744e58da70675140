// The seam between the send pipeline and the ways a packet leaves it. A
// transport hands an encoded packet to one kind of target (a node's inbox on
// this host, a remote host over a libp2p peer link; later a relayed
// connection or an agent behind another protocol) and resolves once the
// packet is durable on this host's side. The send pipeline picks the
// transport registered for the target's kind (the `Transports` table of
// src/routing/send.ts, filled in src/host/components.ts).
import type { Packet } from '../packet/types.js'
import type { InboxStore } from '../store/inbox.js'

/** What `send` answers: the message id, and whether it is already in the target inbox or waits in the outbox. */
export interface QueueResult { id: string, state: 'queued' | 'delivered', seq?: number }

/** The fields of a target every transport sees; each transport names the further fields it needs. */
export interface TransportTarget { readonly kind: string }

export interface Transport<T extends TransportTarget = TransportTarget> {
  /**
   * Make the packet durable for delivery to `target` (`ttl`, ms, bounds how
   * long it may wait). `whole`, with a transport that has `room`: a buffer of
   * room(packet) free bytes then `bytes`, for the transport to store as it is.
   */
  deliver: (packet: Packet, bytes: Uint8Array, target: T, ttl: number, whole?: Uint8Array) => Promise<QueueResult>
  /** how many bytes the stored value needs before the packet's (the sender encodes the packet after as many) */
  room?: (packet: Packet) => number
}

/** Outbox destinations of A2A agents start with this (peer ids never contain ':'); the peer links leave them alone. */
export const A2A_QUEUE_PREFIX = 'a2a:'
export const a2aQueue = (agentId: string): string => `${A2A_QUEUE_PREFIX}${agentId}`
export const isA2aQueue = (dest: string): boolean => dest.startsWith(A2A_QUEUE_PREFIX)

/** A target on a remote amesh host reached over libp2p: the host's peer id. */
export interface PeerTarget extends TransportTarget { readonly host: string }

export interface InboxTransportComponents { inbox: Pick<InboxStore, 'append'> }

/** A node on this host: the packet goes straight into its inbox, durable before this resolves. */
export class InboxTransport implements Transport {
  constructor (private readonly components: InboxTransportComponents) {}

  async deliver (packet: Packet, bytes: Uint8Array): Promise<QueueResult> {
    const [r] = await this.components.inbox.append([{ nodeId: packet.to, packetId: packet.id, packet: bytes }])
    if ('error' in r) throw r.error
    return { id: packet.id, state: 'delivered', seq: r.seq }
  }
}
