// The types, constants and errors of a node's AgentCard (see card.ts): the A2A
// v1.0 card as amesh builds it and the amesh node extension it carries.

import { AmeshError } from '../util/errors.js'
import type { JsonObject } from './canonical-json.js'

/** protocolBinding URI of amesh's libp2p binding (`/amesh/packet/1.0.0`). */
export const AMESH_BINDING_URI = 'https://amesh.dev/bindings/libp2p/1.0'
/** URI of the amesh node extension in `capabilities.extensions`. */
export const NODE_EXTENSION_URI = 'https://amesh.dev/extensions/node/v1'
export const A2A_PROTOCOL_VERSION = '1.0'
export const DEFAULT_CARD_VERSION = '1.0.0'
export const DEFAULT_MODES: readonly string[] = ['text/plain', 'application/json']
/** Node names: also used in DHT keys, so no `/`, no spaces, bounded. */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** Verified cards kept by content hash. */
export const VERIFIED_CARD_CACHE_SIZE = 1024

export type NodeKind = 'external' | 'managed'

/** One A2A AgentCardSignature: a JWS in flattened form without its payload. */
export interface JwsSignature {
  /** BASE64URL(UTF-8(protected header JSON)) */
  protected: string
  /** BASE64URL(Ed25519 signature) */
  signature: string
  /** optional unprotected header */
  header?: JsonObject
}

export interface AgentSkill { id: string, name: string, description: string, tags: string[] }
export interface AgentInterface { url: string, protocolBinding: string, protocolVersion: string }

export interface NodeExtensionParams {
  nodeId: string
  kind: NodeKind
  hostPeerId: string
  hostAddrs: string[]
  /** parent node id; absent for a root node */
  parent?: string
  /** raw Ed25519 public key, base64url */
  publicKey: string
  /** ms since the epoch */
  issuedAt: number
  /** ms since the epoch */
  expiresAt: number
}

export interface NodeExtension {
  uri: string
  description: string
  required: boolean
  params: NodeExtensionParams
}

/** Another declared extension (the A2A face's resume extension): `required` absent means false. */
export interface DeclaredExtension {
  uri: string
  description: string
  required?: boolean
}

/** URI of amesh's SSE resume extension (A2A face, docs/A2A.md). */
export const RESUME_EXTENSION_URI = 'https://amesh.dev/extensions/a2a-resume/v1'
/** The name of the HTTP bearer scheme in a card served by the A2A face. */
export const A2A_BEARER_SCHEME = 'ameshBearer'

export interface AgentCapabilities {
  streaming: boolean
  pushNotifications: boolean
  /** the node extension first; a face-served card adds DeclaredExtensions after it (see card.ts withA2aFace) */
  extensions: NodeExtension[]
}

/** An A2A v1.0 AgentCard as amesh builds it (before signing). */
export interface AgentCard {
  name: string
  description: string
  version: string
  supportedInterfaces: AgentInterface[]
  capabilities: AgentCapabilities
  defaultInputModes: string[]
  defaultOutputModes: string[]
  skills: AgentSkill[]
  /** filled when the host's A2A face serves the node (proto-JSON SecurityScheme map) */
  securitySchemes?: Record<string, JsonObject>
  securityRequirements?: JsonObject[]
}

export interface SignedAgentCard extends AgentCard {
  signatures: JwsSignature[]
}

export interface CardInfo {
  nodeId: string
  name: string
  description?: string
  kind: NodeKind
  hostPeerId: string
  hostAddrs: string[]
  parent?: string
  skills?: AgentSkill[]
  version?: string
  /** the A2A face's base URL (http://127.0.0.1:PORT): adds its JSONRPC and HTTP+JSON interfaces */
  a2aBaseUrl?: string
  issuedAt: number
  expiresAt: number
}

export interface VerifiedCard {
  readonly card: SignedAgentCard
  readonly nodeId: string
  readonly name: string
  readonly kind: NodeKind
  readonly hostPeerId: string
  readonly hostAddrs: readonly string[]
  readonly parent: string | undefined
  readonly issuedAt: number
  readonly expiresAt: number
}

export class CardMalformedError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) {
    super('CARD_MALFORMED', message, options)
    this.name = 'CardMalformedError'
  }
}

export class CardSignatureError extends AmeshError {
  constructor (message: string, options?: { cause?: unknown }) {
    super('CARD_SIGNATURE', message, options)
    this.name = 'CardSignatureError'
  }
}
