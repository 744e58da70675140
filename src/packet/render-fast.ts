// A render-only reader of stored packet bytes: the rendered entry that
// renderPacket(PacketDecoder.decode(bytes)) gives, read in one pass straight
// into the rendered object. It accepts exactly the bytes PacketDecoder accepts
// (the same canonical subset and the same checks, the proof's included), and
// skips only what the rendered form does not carry: the proof's byte strings
// are checked in place, not copied, and no Packet object is built between the
// bytes and the rendered entry. Anything else gives undefined: the caller then
// renders the entry the reference way (follow-frames.ts renderOne).
// Equivalence: test/packet/render-fast.test.ts (random packets of every shape
// and their mutations, against PacketDecoder + renderPacket).
import { NOT_CANONICAL, keyTable, out } from './canonical-reader.js'
import { MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP } from './cbor-cursor.js'
import { FIELDS, FIELD_NAMES, MAX_PROOF_ITEMS, PACKET_KEYS, RENDERED_FIELDS, SIGNALS } from './fields.js'
import type { FieldName } from './fields.js'
import { Reader as PacketReader } from './decode-fast.js'
import { RecentIds } from './recent-ids.js'
import type { PacketEntry, RenderedPacket } from './render.js'
import { signalPayloadProblem } from './rules.js'
import type { Payload, Scope, Signal } from './types.js'

const TOP_KEYS = keyTable(PACKET_KEYS)
const PROOF_KEYS = keyTable(['lineage', 'grants'])
const EMPTY = new Uint8Array(0)

/** How each key of TOP_KEYS is read (the envelope by name, the optional fields by kind) */
const R_ID = 0
const R_FROM = 1
const R_TO = 2
const R_TS = 3
const R_SIGNAL = 4
const R_SCOPE = 5
const R_PAYLOAD = 6
const R_PROOF = 7
const R_STRING = 8
const R_NODE = 9
const R_ENUM = 10
const R_BOOL = 11
const ENVELOPE: Record<string, number> = { id: R_ID, from: R_FROM, to: R_TO, ts: R_TS, signal: R_SIGNAL, scope: R_SCOPE, payload: R_PAYLOAD, proof: R_PROOF }
const OPTIONAL = { string: R_STRING, nodeId: R_NODE, enum: R_ENUM, bool: R_BOOL } as const
const READ = Uint8Array.from(TOP_KEYS.names, (k) => ENVELOPE[k] ?? OPTIONAL[FIELDS[k as FieldName].kind])
/** the index in FIELD_NAMES of each key of TOP_KEYS (-1 for the envelope) */
const FIELD_AT = Int8Array.from(TOP_KEYS.names, (k) => (FIELD_NAMES as readonly string[]).indexOf(k))
const ENUM_VALUES: ReadonlyArray<readonly string[]> = TOP_KEYS.names.map((k) => {
  const spec = FIELDS[k as FieldName]
  return spec !== undefined && spec.kind === 'enum' ? spec.values : []
})
const FROM_NAME = FIELD_NAMES.indexOf('from_name')
const TO_NAME = FIELD_NAMES.indexOf('to_name')
/** the FIELD_NAMES index of each rendered optional field, in the rendered order */
const RENDERED_AT = Int8Array.from(RENDERED_FIELDS, (k) => FIELD_NAMES.indexOf(k))

function oneOf (list: readonly string[], v: string): string {
  return list.includes(v) ? v : out()
}

/** The verified name this host knows for a node, else the name the packet carries (render.ts nameOf). */
function nameOf (id: string, carried: unknown, label: (id: string) => string): string {
  const known = label(id)
  return known !== id ? known : (carried as string | undefined) ?? id
}

/** PacketReader with the proof checked in place (what PacketReader.proof accepts, nothing copied). */
class RenderReader extends PacketReader {
  constructor () { super(new RecentIds()) }

  skipProof (): void {
    const n = this.count(MAJOR_MAP)
    let k = -1
    for (let i = 0; i < n; i++) {
      k = this.key(PROOF_KEYS, k)
      const items = this.count(MAJOR_ARRAY)
      if (items > MAX_PROOF_ITEMS) out()
      for (let j = 0; j < items; j++) {
        const len = this.head(MAJOR_BYTES)
        if (len > this.end - this.pos) out()
        this.pos += len
      }
    }
  }
}

/** The envelope fields as they are read (each at most once). */
interface Envelope { id?: string, from?: string, to?: string, ts?: number, signal?: Signal, scope?: Scope, payload?: Payload }

/**
 * Renders stored packet bytes as renderPacket of PacketDecoder's packet
 * does. Like a PacketDecoder it keeps the recently seen node ids: whoever
 * renders a stream of entries owns one.
 */
export class RenderDecoder {
  private readonly r = new RenderReader()
  /** the optional field values of the packet being read, by FIELD_NAMES index (empty between calls) */
  private readonly opt: unknown[] = new Array(FIELD_NAMES.length).fill(undefined)

  /** The rendered entry, or undefined when PacketDecoder would not decode its packet (then render it the reference way). */
  render (entry: PacketEntry, label: (id: string) => string): RenderedPacket | undefined {
    const bytes = entry.packet
    const r = this.r
    try {
      r.start(bytes)
      const n = r.count(MAJOR_MAP)
      const f: Envelope = {}
      let k = -1
      for (let i = 0; i < n; i++) {
        k = r.key(TOP_KEYS, k)
        this.field(k, f)
      }
      if (!r.done()) out()
      return this.build(entry, f, label)
    } catch (err) {
      if (err === NOT_CANONICAL) return undefined
      throw err
    } finally {
      this.opt.fill(undefined)
      r.reset(EMPTY)
    }
  }

  private field (k: number, f: Envelope): void {
    const r = this.r
    switch (READ[k]) {
      case R_ID: f.id = r.ulid(); return
      case R_FROM: f.from = r.nodeId(); return
      case R_TO: f.to = r.nodeId(); return
      case R_TS: f.ts = r.uint(); return
      case R_SIGNAL: f.signal = oneOf(SIGNALS, r.text()) as Signal; return
      case R_SCOPE: f.scope = r.scope(); return
      case R_PAYLOAD: f.payload = r.payload(); return
      case R_PROOF: r.skipProof(); return
      case R_STRING: this.opt[FIELD_AT[k]] = r.str(); return
      case R_NODE: this.opt[FIELD_AT[k]] = r.nodeId(); return
      case R_ENUM: this.opt[FIELD_AT[k]] = oneOf(ENUM_VALUES[k], r.text()); return
      case R_BOOL: this.opt[FIELD_AT[k]] = r.bool(); return
      default: out()
    }
  }

  /** The rendered entry of the fields read, in renderPacket's key order. */
  private build (entry: PacketEntry, f: Envelope, label: (id: string) => string): RenderedPacket {
    const { id, from, to, signal, payload, ts } = f
    if (id === undefined || from === undefined || to === undefined || signal === undefined || payload === undefined || ts === undefined) return out()
    if (signalPayloadProblem(signal, payload) !== undefined) out()
    const opt = this.opt
    const rendered: RenderedPacket = {
      seq: entry.seq,
      id,
      from: nameOf(from, opt[FROM_NAME], label),
      from_id: from,
      to: nameOf(to, opt[TO_NAME], label),
      to_id: to,
      signal,
      payload,
      scope: f.scope ?? { files: [], zone: 'project' },
      ts,
      received: entry.received
    }
    for (let i = 0; i < RENDERED_AT.length; i++) {
      const v = opt[RENDERED_AT[i]]
      if (v !== undefined) rendered[RENDERED_FIELDS[i]] = v
    }
    return rendered
  }
}
