// The shape of a received AgentCard: every field checked, every string and list
// bounded, before any signature is looked at.

import { isNodeId } from '../identity/node-key.js'
import { CardMalformedError, NODE_EXTENSION_URI, NODE_NAME_PATTERN, type SignedAgentCard } from './card-types.js'

const MAX_TEXT = 1024
const MAX_DESCRIPTION = 4096
const MAX_ITEMS = 64

type Rec = Record<string, unknown>

export function isRecord (value: unknown): value is Rec {
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
