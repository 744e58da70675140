// A node's AgentCard: an A2A v1.0 AgentCard signed by the node's own key.
// What A2A has no field for (node id, kind, serving host, lineage, key,
// validity) travels in the amesh node extension, declared by URI in
// `capabilities.extensions`. The signature follows A2A's card-signature rules:
// a detached-payload JWS (RFC 7515) over the RFC 8785 canonical JSON of the
// card without `signatures`. See docs/DISCOVERY.md.

import { isNodeId, nodeIdFromPublicKey, publicKeyFromNodeId, verifyByNodeId, type NodeKey } from '../identity/node-key.js'
import { AmeshError, InvalidArgumentError } from '../util/errors.js'
import { canonicalBytes, canonicalize, type JsonObject } from './canonical-json.js'
import { BoundedIndex, contentHash } from './card-index.js'

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

export interface AgentCapabilities {
  streaming: boolean
  pushNotifications: boolean
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

// ---- JWS with detached payload (RFC 7515 §5.2, Appendix F) --------------

const JWS_ALG = 'EdDSA'
const JWS_TYP = 'JOSE'
const B64URL = /^[A-Za-z0-9_-]+$/

function b64url (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url')
}

function signingInput (protectedB64: string, payloadB64: string): Uint8Array {
  return new TextEncoder().encode(protectedB64 + '.' + payloadB64)
}

/**
 * Sign the canonical JSON of `payload` with `key`. The result is a JWS whose
 * payload is detached: re-attach BASE64URL(canonical payload) to verify it
 * with any JOSE library.
 */
export function signDetached (payload: JsonObject, key: NodeKey): JwsSignature {
  const header = { alg: JWS_ALG, typ: JWS_TYP, kid: key.id }
  const protectedB64 = b64url(canonicalBytes(header))
  const signature = key.sign(signingInput(protectedB64, b64url(canonicalBytes(payload))))
  return { protected: protectedB64, signature: b64url(signature) }
}

/** True when some signature has kid = nodeId and verifies under its key. */
export function verifyDetached (payload: JsonObject, signatures: readonly JwsSignature[], nodeId: string): boolean {
  const payloadB64 = b64url(canonicalBytes(payload))
  return signatures.some((sig) => B64URL.test(sig.protected) && B64URL.test(sig.signature) &&
    headerNamesSigner(sig.protected, nodeId) &&
    verifyByNodeId(nodeId, signingInput(sig.protected, payloadB64), new Uint8Array(Buffer.from(sig.signature, 'base64url'))))
}

function headerNamesSigner (protectedB64: string, nodeId: string): boolean {
  let header: unknown
  try {
    header = JSON.parse(Buffer.from(protectedB64, 'base64url').toString('utf8'))
  } catch {
    return false
  }
  if (!isRecord(header)) return false
  // an unknown `crit` extension must make the signature unusable (RFC 7515 §4.1.11)
  return header.alg === JWS_ALG && header.kid === nodeId && header.crit === undefined &&
    (header.typ === undefined || header.typ === JWS_TYP)
}

// ---- shape of a received card --------------------------------------------

const MAX_TEXT = 1024
const MAX_DESCRIPTION = 4096
const MAX_ITEMS = 64

type Rec = Record<string, unknown>

function isRecord (value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function malformed (what: string): never {
  throw new CardMalformedError(`card: ${what}`)
}

function record (value: unknown, at: string): Rec {
  return isRecord(value) ? value : malformed(`${at} must be an object`)
}

function text (o: Rec, key: string, at: string, max = MAX_TEXT): string {
  const v = o[key]
  return typeof v === 'string' && v.length <= max ? v : malformed(`${at}.${key} must be a string of at most ${max} characters`)
}

function list (o: Rec, key: string, at: string, min = 0): unknown[] {
  const v = o[key]
  if (!Array.isArray(v) || v.length < min || v.length > MAX_ITEMS) malformed(`${at}.${key} must be an array of ${min}..${MAX_ITEMS} items`)
  return v
}

function texts (o: Rec, key: string, at: string): string[] {
  const items = list(o, key, at)
  items.forEach((v, i) => { if (typeof v !== 'string' || v.length > MAX_TEXT) malformed(`${at}.${key}[${i}] must be a string`) })
  return items as string[]
}

function flag (o: Rec, key: string, at: string): void {
  if (o[key] !== undefined && typeof o[key] !== 'boolean') malformed(`${at}.${key} must be a boolean`)
}

function time (o: Rec, key: string, at: string): number {
  const v = o[key]
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : malformed(`${at}.${key} must be integer ms`)
}

function nodeId (o: Rec, key: string, at: string): string {
  const v = text(o, key, at)
  return isNodeId(v) ? v : malformed(`${at}.${key} is not a node id`)
}

/** Validate a received card's shape; returns the same object, typed. */
export function parseCardShape (value: unknown): SignedAgentCard {
  const card = record(value, 'card')
  const name = text(card, 'name', 'card')
  if (!NODE_NAME_PATTERN.test(name)) malformed(`invalid node name ${JSON.stringify(name)}`)
  text(card, 'description', 'card', MAX_DESCRIPTION)
  text(card, 'version', 'card')
  list(card, 'supportedInterfaces', 'card', 1).forEach((v, i) => checkInterface(v, `card.supportedInterfaces[${i}]`))
  checkCapabilities(record(card.capabilities, 'card.capabilities'))
  texts(card, 'defaultInputModes', 'card')
  texts(card, 'defaultOutputModes', 'card')
  list(card, 'skills', 'card').forEach((v, i) => checkSkill(v, `card.skills[${i}]`))
  list(card, 'signatures', 'card', 1).forEach((v, i) => checkSignature(v, `card.signatures[${i}]`))
  return card as unknown as SignedAgentCard
}

function checkInterface (value: unknown, at: string): void {
  const o = record(value, at)
  text(o, 'url', at)
  text(o, 'protocolBinding', at)
  text(o, 'protocolVersion', at)
}

function checkSkill (value: unknown, at: string): void {
  const o = record(value, at)
  text(o, 'id', at)
  text(o, 'name', at)
  text(o, 'description', at, MAX_DESCRIPTION)
  texts(o, 'tags', at)
}

function checkSignature (value: unknown, at: string): void {
  const o = record(value, at)
  text(o, 'protected', at, MAX_DESCRIPTION)
  text(o, 'signature', at, MAX_DESCRIPTION)
  if (o.header !== undefined) record(o.header, `${at}.header`)
}

function checkCapabilities (caps: Rec): void {
  flag(caps, 'streaming', 'card.capabilities')
  flag(caps, 'pushNotifications', 'card.capabilities')
  const extensions = list(caps, 'extensions', 'card.capabilities', 1)
  const ours = extensions.filter((e) => isRecord(e) && e.uri === NODE_EXTENSION_URI)
  if (ours.length !== 1) malformed('capabilities.extensions must declare the amesh node extension exactly once')
  extensions.forEach((v, i) => { text(record(v, `card.capabilities.extensions[${i}]`), 'uri', 'extension') })
  const ext = ours[0] as Rec
  if (ext.required !== true) malformed('the amesh node extension must be required')
  checkParams(record(ext.params, 'extension.params'))
}

function checkParams (p: Rec): void {
  const at = 'extension.params'
  nodeId(p, 'nodeId', at)
  if (p.kind !== 'external' && p.kind !== 'managed') malformed(`${at}.kind must be external or managed`)
  if (text(p, 'hostPeerId', at).length === 0) malformed(`${at}.hostPeerId is empty`)
  texts(p, 'hostAddrs', at)
  if (p.parent !== undefined) nodeId(p, 'parent', at)
  text(p, 'publicKey', at)
  if (time(p, 'expiresAt', at) <= time(p, 'issuedAt', at)) malformed(`${at}.expiresAt must be after issuedAt`)
}
