// A direct decoder for packet bytes in the canonical form encodeCanonical
// writes: minimal-length heads, definite lengths, map keys in canonical order
// (shorter first, then bytewise) with no repeats, only the packet's own keys,
// valid UTF-8. It decodes and validates in one pass and returns the packet
// validatePacket(dag-cbor decode) would return, or undefined for anything
// else: the caller then takes the dag-cbor path, which makes the accept /
// reject decision and gives the error. So this never accepts a packet that
// path rejects; it only skips work for packets that path accepts.
//
// Choices that follow @ipld/dag-cbor (cborg, strict options):
// - byte strings are copies (cborg slices); nothing shares the input buffer,
//   which receivers keep in caches (acl decision cache) and stores;
// - a text string's leading U+FEFF is kept, as the reference decoder keeps
//   it (cbor-decode.ts: cborg's own TextDecoder would drop it);
// - invalid UTF-8 is not handled here (cborg replaces it with U+FFFD).
//
// The top-level keys and the readers of the optional fields come from the
// field table (fields.ts). A PacketDecoder keeps its own cache of recently
// seen node ids: whoever decodes a stream of packets owns one.
import { Buffer } from 'node:buffer'
import { isNodeId } from '../identity/node-key.js'
import { latin1Slice } from '../util/slices.js'
import { CanonicalReader, NOT_CANONICAL, keyTable, out } from './canonical-reader.js'
import { MAJOR_ARRAY, MAJOR_MAP, MAJOR_TEXT } from './cbor-cursor.js'
import { FIELDS, FIELD_NAMES, MAX_FILES, MAX_LIST_STRING, MAX_PROOF_ITEMS, MAX_TEXT_FIELD, PACKET_KEYS, SIGNALS, ZONES } from './fields.js'
import type { FieldName } from './fields.js'
import { RecentIds } from './recent-ids.js'
import { signalPayloadProblem } from './rules.js'
import type { Packet, Payload, PayloadField, Proof, Scope, Zone } from './types.js'

/** the ULID alphabet (Crockford base32, upper case), as util/ulid.ts checks it */
const ULID_CHAR = new Uint8Array(128)
for (const c of '0123456789ABCDEFGHJKMNPQRSTVWXYZ') ULID_CHAR[c.charCodeAt(0)] = 1
const ULID_LENGTH = 26
const EMPTY = new Uint8Array(0)

const TOP_KEYS = keyTable(PACKET_KEYS)
const SCOPE_KEYS = keyTable(['files', 'zone'])
const PAYLOAD_KEYS = keyTable(['text', 'context', 'decision', 'options', 'result'])
const PROOF_KEYS = keyTable(['lineage', 'grants'])

function oneOf<T extends string> (list: readonly T[], v: string): T {
  return (list as readonly string[]).includes(v) ? v as T : out()
}

/** The packet's readers (render-fast.ts reads the same fields with them). */
export class Reader extends CanonicalReader {
  constructor (private readonly recentIds: RecentIds | undefined) { super() }

  /** Read `bytes`; a Buffer is read through a plain Uint8Array view (slices of a Buffer would be Buffers, cborg's are plain). */
  start (bytes: Uint8Array): void {
    this.reset(Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes)
  }

  ulid (): string {
    const n = this.head(MAJOR_TEXT)
    const s = this.pos
    if (n !== ULID_LENGTH || n > this.end - s) out()
    const d = this.bytes
    for (let i = s; i < s + n; i++) {
      const c = d[i]
      if (c >= 0x80 || ULID_CHAR[c] !== 1) out()
    }
    this.pos = s + n
    // one flat string of the 26 ASCII bytes: no 26 concatenations, no rope to flatten when the id is hashed (inbox maps)
    return latin1Slice.call(d, s, s + n)
  }

  /** A node id (from, to, return_to): a recently seen one is recognised by its bytes. */
  nodeId (): string {
    const start = this.pos
    const recent = this.recentIds
    const known = recent?.find(this.bytes, start, this.end)
    if (known !== undefined) { this.pos = start + known.bytes.length; return known.id }
    const v = this.str()
    if (!isNodeId(v)) out()
    recent?.remember(this.bytes.slice(start, this.pos), v)
    return v
  }

  stringList (min: number, max: number): string[] {
    const n = this.count(MAJOR_ARRAY)
    if (n < min || n > max) out()
    const list: string[] = []
    for (let i = 0; i < n; i++) {
      list.push(this.upTo(MAX_LIST_STRING))
    }
    return list
  }

  bytesList (): Uint8Array[] {
    const n = this.count(MAJOR_ARRAY)
    if (n > MAX_PROOF_ITEMS) out()
    const list: Uint8Array[] = []
    for (let i = 0; i < n; i++) list.push(this.byteString())
    return list
  }

  scope (): Scope {
    const n = this.count(MAJOR_MAP)
    let files: string[] = []
    let zone: Zone = 'project'
    let k = -1
    for (let i = 0; i < n; i++) {
      k = this.key(SCOPE_KEYS, k)
      if (SCOPE_KEYS.names[k] === 'zone') zone = oneOf(ZONES, this.text())
      else files = this.stringList(0, MAX_FILES)
    }
    return { files, zone }
  }

  payload (): Payload {
    const n = this.count(MAJOR_MAP)
    const payload: Payload = {}
    let k = -1
    for (let i = 0; i < n; i++) {
      k = this.key(PAYLOAD_KEYS, k)
      const name = PAYLOAD_KEYS.names[k] as PayloadField
      if (name === 'options') payload.options = this.options()
      else if (name === 'text') payload.text = this.upTo(MAX_TEXT_FIELD)
      else payload[name] = this.value()
    }
    return payload
  }

  proof (): Proof {
    const n = this.count(MAJOR_MAP)
    let lineage: Uint8Array[] | undefined
    let grants: Uint8Array[] | undefined
    let k = -1
    for (let i = 0; i < n; i++) {
      k = this.key(PROOF_KEYS, k)
      if (PROOF_KEYS.names[k] === 'grants') grants = this.bytesList()
      else lineage = this.bytesList()
    }
    const proof: Proof = {}
    if (lineage !== undefined) proof.lineage = lineage
    if (grants !== undefined) proof.grants = grants
    return proof
  }
}

/** The packet's fields as they are read (each at most once; `build` checks the required ones). */
type Fields = Partial<Packet>

/** How each key of TOP_KEYS is read: the envelope by name, the optional fields by their kind */
const K_ID = 0
const K_FROM = 1
const K_TO = 2
const K_TS = 3
const K_SIGNAL = 4
const K_SCOPE = 5
const K_PAYLOAD = 6
const K_PROOF = 7
const K_STRING = 8
const K_NODE = 9
const K_ENUM = 10
const K_BOOL = 11
const ENVELOPE_READ: Record<string, number> = { id: K_ID, from: K_FROM, to: K_TO, ts: K_TS, signal: K_SIGNAL, scope: K_SCOPE, payload: K_PAYLOAD, proof: K_PROOF }
const OPTIONAL_READ = { string: K_STRING, nodeId: K_NODE, enum: K_ENUM, bool: K_BOOL } as const
const TOP_READ = Uint8Array.from(TOP_KEYS.names, (k) => ENVELOPE_READ[k] ?? OPTIONAL_READ[FIELDS[k as FieldName].kind])
/** the index in FIELD_NAMES of each key of TOP_KEYS (-1 for the envelope) */
const TOP_FIELD = Int8Array.from(TOP_KEYS.names, (k) => (FIELD_NAMES as readonly string[]).indexOf(k))
const TOP_VALUES: ReadonlyArray<readonly string[]> = TOP_KEYS.names.map((k) => {
  const spec = FIELDS[k as FieldName]
  return spec !== undefined && spec.kind === 'enum' ? spec.values : []
})

/** Read the value of TOP_KEYS[k]: an envelope field into `f`, an optional one into `opt` (by its FIELD_NAMES index). */
function readField (r: Reader, k: number, f: Fields, opt: unknown[]): void {
  switch (TOP_READ[k]) {
    case K_ID: f.id = r.ulid(); return
    case K_FROM: f.from = r.nodeId(); return
    case K_TO: f.to = r.nodeId(); return
    case K_TS: f.ts = r.uint(); return
    case K_SIGNAL: f.signal = oneOf(SIGNALS, r.text()); return
    case K_SCOPE: f.scope = r.scope(); return
    case K_PAYLOAD: f.payload = r.payload(); return
    case K_PROOF: f.proof = r.proof(); return
    case K_STRING: opt[TOP_FIELD[k]] = r.str(); return
    case K_NODE: opt[TOP_FIELD[k]] = r.nodeId(); return
    case K_ENUM: opt[TOP_FIELD[k]] = oneOf(TOP_VALUES[k], r.text()); return
    case K_BOOL: opt[TOP_FIELD[k]] = r.bool(); return
    default: out()
  }
}

/** The packet of the fields read; takes the optional values out of `opt` (leaving it empty). */
function build (f: Fields, opt: unknown[]): Packet {
  const { id, from, to, signal, payload, ts } = f
  if (id === undefined || from === undefined || to === undefined || signal === undefined || payload === undefined || ts === undefined) return out()
  if (signalPayloadProblem(signal, payload) !== undefined) out()
  const p: Packet = { id, from, to, signal, scope: f.scope ?? { files: [], zone: 'project' }, payload, ts }
  // the order validatePacket sets them in
  const o = p as unknown as Record<string, unknown>
  for (let i = 0; i < opt.length; i++) {
    const v = opt[i]
    if (v !== undefined) { o[FIELD_NAMES[i]] = v; opt[i] = undefined }
  }
  if (f.proof !== undefined) p.proof = f.proof
  return p
}

/**
 * A direct decoder of canonical packet bytes. It keeps the encoded form of
 * the node ids it checked recently (a stream carries the same few): the
 * receiver of a stream owns one; decodeCanonicalPacket uses one without
 * that cache.
 */
export class PacketDecoder {
  private readonly r: Reader
  /** the optional field values of the packet being read, by FIELD_NAMES index (empty between calls) */
  private readonly opt: unknown[] = new Array(FIELD_NAMES.length).fill(undefined)

  constructor (opts: { recentIds?: boolean } = {}) {
    this.r = new Reader(opts.recentIds === false ? undefined : new RecentIds())
  }

  /**
   * The packet in canonical packet bytes, equal to validatePacket(dag-cbor
   * decode of them); undefined when the bytes are outside the canonical subset
   * or not a valid packet (the dag-cbor path then decides and names the error).
   */
  decode (bytes: Uint8Array): Packet | undefined {
    if (!(bytes instanceof Uint8Array)) return undefined
    const r = this.r
    try {
      r.start(bytes)
      const n = r.count(MAJOR_MAP)
      const f: Fields = {}
      let k = -1
      for (let i = 0; i < n; i++) {
        k = r.key(TOP_KEYS, k)
        readField(r, k, f, this.opt)
      }
      if (!r.done()) out()
      return build(f, this.opt)
    } catch (err) {
      this.opt.fill(undefined)
      if (err === NOT_CANONICAL) return undefined
      throw err
    } finally {
      r.reset(EMPTY)
    }
  }
}

/** PacketDecoder.decode without a recent-ids cache (a fresh decoder per call). */
export function decodeCanonicalPacket (bytes: Uint8Array): Packet | undefined {
  return new PacketDecoder({ recentIds: false }).decode(bytes)
}
