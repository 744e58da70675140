// A node's AgentCard: an A2A v1.0 AgentCard signed by the node's own key.
// What A2A has no field for (node id, kind, serving host, lineage, key,
// validity) travels in the amesh node extension, declared by URI in
// `capabilities.extensions`. The signature follows A2A's card-signature rules:
// a detached-payload JWS (RFC 7515) over the RFC 8785 canonical JSON of the
// card without `signatures`. See docs/DISCOVERY.md.

import { isNodeId, nodeIdFromPublicKey, publicKeyFromNodeId, type NodeKey } from '../identity/node-key.js'
import { InvalidArgumentError } from '../util/errors.js'
import { canonicalize, type JsonObject } from './canonical-json.js'
import { BoundedIndex, contentHash } from './card-index.js'
import { b64url, signDetached, verifyDetached } from './card-jws.js'
import { parseCardShape } from './card-shape.js'
import {
  A2A_BEARER_SCHEME, A2A_PROTOCOL_VERSION, AMESH_BINDING_URI, RESUME_EXTENSION_URI, CardMalformedError, CardSignatureError, DEFAULT_CARD_VERSION, DEFAULT_MODES,
  NODE_EXTENSION_URI, NODE_NAME_PATTERN, VERIFIED_CARD_CACHE_SIZE,
  type AgentCard, type AgentSkill, type DeclaredExtension, type NodeExtension, type CardInfo, type NodeExtensionParams, type SignedAgentCard, type VerifiedCard
} from './card-types.js'

export * from './card-types.js'
export { signDetached, verifyDetached } from './card-jws.js'
export { parseCardShape } from './card-shape.js'

const DEFAULT_SKILL: AgentSkill = {
  id: 'message',
  name: 'message',
  description: 'Receives amesh packets (MESSAGE and the ADR-026 signals) over the amesh libp2p binding',
  tags: ['amesh', 'message']
}

const EXTENSION_DESCRIPTION = 'amesh node identity: node id, kind, serving host, lineage, public key and validity'

/** The A2A interface URL of a node served by a host. */
export function nodeUrl (hostPeerId: string, nodeId: string): string {
  return `libp2p://${hostPeerId}/${nodeId}`
}

/** Build the (unsigned) AgentCard of a node; one function for both kinds. */
export function buildCard (info: CardInfo): AgentCard {
  checkInfo(info)
  const card = baseCard(info)
  return info.a2aBaseUrl === undefined ? card : withA2aFace(card, info.a2aBaseUrl)
}

/** The URL of a node's A2A face: its card is at `<this>.well-known/agent-card.json`. */
export function a2aNodeUrl (baseUrl: string, name: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/nodes/${encodeURIComponent(name)}/`
}

/**
 * The card as the host's A2A face serves it: a JSONRPC and an HTTP+JSON
 * interface, the HTTP bearer scheme (an amesh capability credential) and the
 * resume extension. Optional members are left out rather than set to their
 * defaults (`required: false`, empty lists): A2A SDKs canonicalise a card
 * through its proto form before checking the signature, which drops them.
 */
function withA2aFace (card: AgentCard, baseUrl: string): AgentCard {
  const url = a2aNodeUrl(baseUrl, card.name)
  return {
    ...card,
    supportedInterfaces: [
      { url: `${url}jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION },
      { url: `${url}rest`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_PROTOCOL_VERSION },
      ...card.supportedInterfaces
    ],
    capabilities: {
      ...card.capabilities,
      // typed as the node extension's list, which readers index by uri (only the node extension has params)
      extensions: [...card.capabilities.extensions, RESUME_EXTENSION as unknown as NodeExtension]
    },
    securitySchemes: {
      [A2A_BEARER_SCHEME]: {
        httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'amesh-a2a', description: BEARER_DESCRIPTION }
      }
    },
    securityRequirements: [{ schemes: { [A2A_BEARER_SCHEME]: { list: ['/msg/send'] } } }]
  }
}

const RESUME_EXTENSION: DeclaredExtension = {
  uri: RESUME_EXTENSION_URI,
  description: 'SSE resume: every event of SubscribeToTask carries an id; Last-Event-ID replays the events after it'
}
const BEARER_DESCRIPTION = 'An amesh A2A client credential from `amesh grant --to-a2a`; the caller acts as that client node'

function baseCard (info: CardInfo): AgentCard {
  return {
    name: info.name,
    description: info.description ?? `amesh ${info.kind} node ${info.name}`,
    version: info.version ?? DEFAULT_CARD_VERSION,
    supportedInterfaces: [{
      url: nodeUrl(info.hostPeerId, info.nodeId),
      protocolBinding: AMESH_BINDING_URI,
      protocolVersion: A2A_PROTOCOL_VERSION
    }],
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [{ uri: NODE_EXTENSION_URI, description: EXTENSION_DESCRIPTION, required: true, params: extensionParams(info) }]
    },
    defaultInputModes: [...DEFAULT_MODES],
    defaultOutputModes: [...DEFAULT_MODES],
    skills: (info.skills ?? [DEFAULT_SKILL]).map((s) => ({ ...s, tags: [...s.tags] }))
  }
}

function extensionParams (info: CardInfo): NodeExtensionParams {
  const publicKey = b64url(publicKeyFromNodeId(info.nodeId))
  const params: NodeExtensionParams = {
    nodeId: info.nodeId,
    kind: info.kind,
    hostPeerId: info.hostPeerId,
    hostAddrs: [...info.hostAddrs],
    publicKey,
    issuedAt: info.issuedAt,
    expiresAt: info.expiresAt
  }
  if (info.parent !== undefined) params.parent = info.parent
  return params
}

function checkInfo (info: CardInfo): void {
  if (!NODE_NAME_PATTERN.test(info.name)) throw new InvalidArgumentError(`invalid node name: ${JSON.stringify(info.name)}`)
  if (!isNodeId(info.nodeId)) throw new InvalidArgumentError(`not a node id: ${info.nodeId}`)
  if (info.parent !== undefined && !isNodeId(info.parent)) throw new InvalidArgumentError(`parent is not a node id: ${info.parent}`)
  if (info.hostPeerId.length === 0) throw new InvalidArgumentError('hostPeerId is empty')
  if (!Number.isSafeInteger(info.issuedAt) || !Number.isSafeInteger(info.expiresAt) || info.expiresAt <= info.issuedAt) {
    throw new InvalidArgumentError('issuedAt/expiresAt must be integer ms with expiresAt > issuedAt')
  }
}

/** Add the node key's A2A card signature (kept alongside any earlier ones). */
export function signCard (card: AgentCard | SignedAgentCard, key: NodeKey): SignedAgentCard {
  const { signatures, ...unsigned } = card as SignedAgentCard
  const signature = signDetached(unsigned as unknown as JsonObject, key)
  return { ...unsigned, signatures: [...(signatures ?? []), signature] }
}

const verifiedCards = new BoundedIndex<VerifiedCard>(VERIFIED_CARD_CACHE_SIZE)

/**
 * Validate the shape of a card, check that its extension's node id matches
 * its public key, and that at least one signature with `kid` = node id
 * verifies under the key the node id names. Results are cached by content hash.
 */
export function verifyCard (card: unknown): VerifiedCard {
  const text = canonicalText(card)
  const hash = contentHash(text)
  const hit = verifiedCards.get(hash)
  if (hit !== undefined) return hit
  const verified = verifyFresh(JSON.parse(text) as unknown)
  verifiedCards.set(hash, verified)
  return verified
}

function canonicalText (card: unknown): string {
  try {
    return canonicalize(card)
  } catch (err) {
    throw new CardMalformedError('card is not canonicalisable JSON', { cause: err })
  }
}

function verifyFresh (value: unknown): VerifiedCard {
  const card = parseCardShape(value)
  const params = card.capabilities.extensions.find((e) => e.uri === NODE_EXTENSION_URI)?.params
  if (params === undefined) throw new CardMalformedError('card lacks the amesh node extension')
  checkKeyMatchesId(params)
  const { signatures, ...unsigned } = card
  if (!verifyDetached(unsigned as unknown as JsonObject, signatures, params.nodeId)) {
    throw new CardSignatureError(`no valid signature by ${params.nodeId} on card ${card.name}`)
  }
  return Object.freeze({
    card: deepFreeze(card),
    nodeId: params.nodeId,
    name: card.name,
    kind: params.kind,
    hostPeerId: params.hostPeerId,
    hostAddrs: params.hostAddrs,
    parent: params.parent,
    issuedAt: params.issuedAt,
    expiresAt: params.expiresAt
  })
}

function checkKeyMatchesId (params: NodeExtensionParams): void {
  const key = new Uint8Array(Buffer.from(params.publicKey, 'base64url'))
  if (key.length !== 32 || b64url(key) !== params.publicKey || nodeIdFromPublicKey(key) !== params.nodeId) {
    throw new CardSignatureError(`publicKey does not match node id ${params.nodeId}`)
  }
}

function deepFreeze<T> (value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member)
    Object.freeze(value)
  }
  return value
}

/** True once the card's validity has ended. */
export function isExpired (vc: Pick<VerifiedCard, 'expiresAt'>, now: number = Date.now()): boolean {
  return now >= vc.expiresAt
}
